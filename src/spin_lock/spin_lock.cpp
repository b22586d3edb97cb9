#include "holdfast/spin_lock.hpp"

#include "lock/kind.hpp"

namespace holdfast {

namespace {

class SpinLockKind final : public detail::ReentrantLockKind {
public:
    SpinLockKind() : ReentrantLockKind(/*announces=*/false) {}

    std::string_view noun() const override { return "spin lock"; }

    detail::AcquireRequest acquire(detail::ClientCore& core, const std::string& name, const std::string& owner,
                                   std::chrono::milliseconds lease, bool try_once) const override {
        detail::AcquireRequest request = ReentrantLockKind::acquire(core, name, owner, lease, try_once);
        request.channel.clear();
        request.backoff = detail::Backoff{};
        return request;
    }
};

const SpinLockKind spin_lock_kind;

}  // namespace

SpinLock::SpinLock(Client& client, std::string name) : Lock(client, std::move(name), spin_lock_kind) {}

}  // namespace holdfast
