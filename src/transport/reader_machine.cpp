#include "transport/reader_machine.hpp"

#include <algorithm>
#include <stdexcept>

namespace holdfast::detail {

void ReaderMachine::feed(std::string_view bytes) { unfed_ = bytes; }

ReaderMachine::Action ReaderMachine::next(const PushTest& is_push) {
    Reply* reply = nullptr;
    try {
        while (!(reply = parser_.next()) && !unfed_.empty()) {
            const std::size_t slice = std::min(feed_slice, unfed_.size());
            parser_.feed(unfed_.data(), slice);
            unfed_.remove_prefix(slice);
        }
    } catch (const std::runtime_error& e) {
        unfed_ = {};
        return {Action::Kind::protocol_error, nullptr, std::string(e.what()) + " (is this a Redis server?)"};
    }
    if (!reply) return {};
    if (is_push && is_push(*reply)) return {Action::Kind::push, reply, {}};
    return {Action::Kind::answer, reply, {}};
}

void ReaderMachine::reset() {
    parser_.reset();
    unfed_ = {};
}

AnswerRoute route_answer(const Reply& reply, Awaited awaited, bool subscriber) {
    if (!awaited.handler) return {subscriber ? AnswerRoute::To::push : AnswerRoute::To::unexpected, false};
    if (awaited.resendable && reply.is_error_code("READONLY")) return {AnswerRoute::To::requeue, false};
    // Reply::code() says NOPERM for Redis 7.0's ERR form too.
    return {AnswerRoute::To::handler, reply.is_error_code("NOPERM")};
}

}  // namespace holdfast::detail
