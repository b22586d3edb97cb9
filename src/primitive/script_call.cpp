#include "primitive/script_call.hpp"

#include "common/quoted.hpp"
#include "primitive/count.hpp"
#include "primitive/reply_errors.hpp"

namespace holdfast::detail {

std::optional<std::int64_t> hold_count_in(const std::string& value) { return parse_count(value); }

Failure not_a_lock(std::string_view server, const std::string& name, const std::string& field,
                   const std::string& value) {
    return wrong_type({}, name, server, "a hash whose field " + quoted(field) + " holds " + quoted(value) +
                                            " (not a hold count)", "lock");
}

std::int64_t hold_count_of(std::string_view server, const std::string& name, const std::string& field,
                           const std::string& value) {
    const auto count = hold_count_in(value);
    if (!count) not_a_lock(server, name, field, value).raise();
    return *count;
}

void eval_reporting(Transport& transport, const Script& script, std::span<const std::string_view> keys,
                    std::span<const std::string_view> args, std::string_view name, std::string what,
                    ReplyHandler done, std::string_view kind) {
    transport.eval(script, keys, args,
                   [&transport, name = std::string(name), what = std::move(what), kind = std::string(kind), done = std::move(done)](
                       Failure error, Reply reply) {
                       if (error || !reply.is_error()) return done(std::move(error), std::move(reply));
                       reply_error(
                           transport, name, what, reply, [done](Failure e) { done(std::move(e), Reply{}); }, kind);
                   });
}

// Its own reply handler, not eval_reporting's wrapped: one closure per attempt.
void attempt_script(Transport& transport, const Script& script, std::initializer_list<std::string_view> keys,
                    std::initializer_list<std::string_view> args, const std::string& name, std::string_view noun,
                    std::function<void(Attempt)> report) {
    transport.eval(script, keys, args,
                   [&transport, &name, noun, report = std::move(report)](Failure error, Reply reply) {
                       if (error) return report(Attempt::failed(std::move(error)));
                       if (reply.is_error())
                           return reply_error(
                               transport, name, std::string(noun), reply,
                               [report](Failure e) { report(Attempt::failed(std::move(e))); }, "lock");
                       if (reply.is_nil()) return report(Attempt::acquired());
                       report(Attempt::refused(reply.integer));
                   });
}

}  // namespace holdfast::detail
