#include "holdfast/read_write_lock.hpp"

#include "rwlock/kind.hpp"

namespace holdfast {

ReadWriteLock::Side::Side(Client& client, std::string name, const detail::LockKind& kind)
    : Lock(client, std::move(name), kind) {}

ReadWriteLock::ReadWriteLock(Client& client, std::string name)
    : read_(client, name, detail::read_lock_kind()), write_(client, std::move(name), detail::write_lock_kind()) {}

}  // namespace holdfast
