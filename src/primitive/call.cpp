#include "primitive/call.hpp"

#include <stdexcept>

#include "primitive/reply_errors.hpp"
#include "transport/transport.hpp"

namespace holdfast::detail {

void refuse_loop_thread(Transport& transport) {
    if (transport.on_loop_thread())
        throw std::logic_error(
            "holdfast: blocking call on the client's event loop thread (from a callback such as a "
            "lease-lost stop_callback); it would wait forever. Use the async_ members or another thread");
}

void ask(Transport& transport, const std::string& key, std::string what, const std::vector<std::string_view>& args,
         std::function<void(Failure, Reply)> done, std::string_view kind) {
    transport.execute(key, args,
                      [&transport, key, what = std::move(what), kind = std::string(kind),
                       done = std::move(done)](Failure error, Reply reply) {
                          if (error || !reply.is_error()) return done(std::move(error), std::move(reply));
                          auto fail = [done](Failure e) { done(std::move(e), Reply{}); };
                          reply_error(transport, key, what, reply, std::move(fail), kind);
                      });
}

Reply query(Transport& transport, const std::string& key, std::string what, const std::vector<std::string_view>& args,
            std::string_view kind) {
    return block<Reply>(transport, [&](auto done) { ask(transport, key, std::move(what), args, std::move(done), kind); });
}

}  // namespace holdfast::detail
