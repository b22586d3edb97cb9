#include "primitive/script_call.hpp"

#include "common/quoted.hpp"
#include "holdfast/errors.hpp"
#include "primitive/count.hpp"
#include "primitive/errors.hpp"

namespace holdfast::detail {

namespace {

std::vector<std::string_view> views(const std::vector<std::string>& strings) {
    return {strings.begin(), strings.end()};
}

}  // namespace

std::int64_t hold_count_of(std::string_view server, const std::string& name, const std::string& field,
                           const std::string& value) {
    const auto count = parse_count(value);
    if (!count)
        throw WrongTypeError("holdfast: " + quoted(name) + (server.empty() ? "" : " on " + std::string(server)) +
                             " is a hash but not a lock: field " + quoted(field) + " holds " + quoted(value) +
                             ", not a hold count; pick another name or delete the key");
    return *count;
}

void eval_reporting(Transport& transport, const Script& script, std::vector<std::string> keys,
                    std::vector<std::string> args, const std::string& name, std::string what, ReplyHandler done,
                    std::string_view kind) {
    transport.eval(script, views(keys), views(args),
                        [&transport, name, what = std::move(what), kind = std::string(kind), done = std::move(done)](
                            std::exception_ptr error, Reply reply) {
                            if (error || !reply.is_error()) return done(std::move(error), std::move(reply));
                            reply_error(
                                transport, name, what, reply,
                                [done](std::exception_ptr e) { done(std::move(e), Reply{}); }, kind);
                        });
}

void attempt_script(Transport& transport, const Script& script, std::vector<std::string> keys,
                    std::vector<std::string> args, const std::string& name, std::string_view noun,
                    std::function<void(Attempt)> report) {
    eval_reporting(transport, script, std::move(keys), std::move(args), name, std::string(noun),
                   [report = std::move(report)](std::exception_ptr error, Reply reply) {
                       if (error) return report(Attempt::failed(std::move(error)));
                       if (reply.is_nil()) return report(Attempt::acquired());
                       report(Attempt::refused(reply.integer));
                   });
}

}  // namespace holdfast::detail
