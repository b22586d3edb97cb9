#include "transport/transport.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <future>
#include <span>

#include "transport/command.hpp"

namespace holdfast::detail {

Transport::Transport(const Config& config)
    : config_(config), work_(asio::make_work_guard(io_)), router_(make_router(io_, config_)) {
    thread_ = std::thread([this] { io_.run(); });
    try {
        router_->start();
    } catch (...) {
        asio::post(io_, [this] {
            router_->stop_now();
            io_.stop();
        });
        thread_.join();
        throw;
    }
}

Transport::~Transport() { shutdown(); }

void Transport::shutdown() {
    if (!thread_.joinable()) return;
    // One task does it all, so nothing queued behind it is skipped: every
    // command and waiter fails with ConnectionError before the loop ends.
    asio::post(io_, [this] {
        leaving_.store(true, std::memory_order_relaxed);
        const auto waiting = waiters_.close();
        // Waiters first, while the connections still carry what they send on
        // the way out (a fair waiter leaving its queue); then those commands
        // and everything else in flight fail with the connections.
        for (auto& waiter : waiting) waiter->on_closed();
        router_->stop_now();
        io_.stop();
    });
    thread_.join();
}

bool Transport::shards_channel(std::string_view key, std::string_view channel) const {
    return router_->shards_channel(key, channel);
}

std::size_t Transport::shard_of(std::string_view key) const { return router_->shard_of(key); }

void Transport::sync_replicas(std::string_view key, std::function<void(Failure, ReplicaAck)> done) {
    Connection& connection = writer_of(key);
    const int replicas = config_.replica_sync == ReplicaSync::off ? 0 : connection.replicas();
    if (replicas == 0) return done(nullptr, ReplicaAck{});
    const bool lost = connection.replicas_lost();
    // The server holds the WAIT's reply, and the connection's commands behind
    // it, for up to replica_sync_timeout: not counted against Config::timeout.
    connection.submit(encode_command({"WAIT", std::to_string(replicas), std::to_string(config_.replica_sync_timeout.count())}),
                      [&connection, replicas, lost, done = std::move(done)](Failure error, Reply reply) {
                          if (error) return done(std::move(error), ReplicaAck{replicas, 0, connection.address(), lost});
                          if (!reply.is_integer()) return done(nullptr, ReplicaAck{0, 0, connection.address()});
                          connection.saw_replicas(static_cast<int>(reply.integer));
                          done(nullptr, ReplicaAck{replicas, reply.integer, connection.address(), lost});
                      },
                      config_.replica_sync_timeout);
}

void Transport::execute(std::string_view key, const std::vector<std::string_view>& args, ReplyHandler handler) {
    dispatch(key, encode_command(args), std::move(handler));
}

std::vector<ServerAddress> Transport::masters() const { return router_->masters(); }

void Transport::execute_on(const ServerAddress& master, const std::vector<std::string_view>& args,
                           ReplyHandler handler) {
    router_->send_to(master, encode_command(args), std::move(handler));
}

namespace {
thread_local int in_order_depth = 0;  // Transport::InOrder objects alive on this thread
}  // namespace

Transport::InOrder::InOrder() { ++in_order_depth; }
Transport::InOrder::~InOrder() { --in_order_depth; }

void Transport::eval(const Script& requested, std::span<const std::string_view> keys,
                     std::span<const std::string_view> args, ReplyHandler handler) {
    const std::string_view first_key = keys.empty() ? std::string_view{} : keys.front();
    // A user the server lets run everything needs no check of its rights.
    const Script& script =
        requested.trusted && writer_of(first_key).user_unrestricted() ? *requested.trusted : requested;
    const std::string numkeys = std::to_string(keys.size());
    // Lock scripts take a handful of arguments: no vector to allocate for them.
    std::array<std::string_view, 16> small;
    std::vector<std::string_view> large;
    std::span<std::string_view> argv(small.data(), 3 + keys.size() + args.size());
    if (argv.size() > small.size()) {
        large.resize(argv.size());
        argv = large;
    }
    argv[0] = "EVALSHA";
    argv[1] = script.sha1;
    argv[2] = numkeys;
    std::copy(args.begin(), args.end(), std::copy(keys.begin(), keys.end(), argv.begin() + 3));
    if (in_order_depth > 0 || leaving_.load(std::memory_order_relaxed)) {
        argv[0] = "EVAL";
        argv[1] = in_order_depth > 0 ? requested.body : script.body;
        return dispatch(first_key, encode_command(argv), std::move(handler));
    }
    // A copy of the request, needed only if the server lost the script (then
    // it is read back, as it is RESP too, and sent again as EVAL with the
    // body) or refused the trusted twin.
    auto request = std::make_shared<ScriptRequest>();
    append_command(request->bytes, argv);
    send_script(requested, script, std::move(request), first_key, std::move(handler));
}

namespace {

// The key a script request routes by: its first key, if it has any.
std::string_view routing_key(const Reply& request) {
    const auto& e = request.elements;
    return e.size() > 3 && e[2].str != "0" ? std::string_view(e[3].str) : std::string_view();
}

}  // namespace

void Transport::send_script(const Script& requested, const Script& script, std::shared_ptr<ScriptRequest> evalsha,
                            std::string_view key, ReplyHandler handler) {
    dispatch(key, evalsha->bytes,
             [this, &requested, &script, evalsha, handler = std::move(handler)](Failure error, Reply reply) mutable {
        if (!error && &script != &requested && reply.is_error_code("NOPERM"))
            return send_checked(requested, script, std::move(evalsha), std::move(handler));
        if (error || !reply.is_error_code("NOSCRIPT")) return handler(error, std::move(reply));
        ReplyReader reader;
        reader.feed(evalsha->bytes.data(), evalsha->bytes.size());
        auto request = reader.next();
        std::vector<std::string_view> eval_form{"EVAL", script.body};
        for (std::size_t i = 2; i < request->elements.size(); ++i) eval_form.push_back(request->elements[i].str);
        const std::string_view key = routing_key(*request);
        // The first EVAL of a script on a server loads it; a NOSCRIPT after
        // that means the server lost it, which is worth telling.
        std::string server = writer_of(key).address();
        if (loaded_.contains({server, &script}) && config_.on_event) {
            Event event;
            event.kind = Event::Kind::script_reloaded;
            event.server = server;
            event.detail = std::string(script.name) + " (the server had lost it: a restart, failover or SCRIPT FLUSH)";
            config_.on_event(event);
        }
        dispatch(key, encode_command(eval_form),
                 [this, &requested, &script, evalsha, server = std::move(server), handler = std::move(handler)](
                     Failure error, Reply reply) mutable {
                     if (!error && !reply.is_error()) loaded_.insert({std::move(server), &script});
                     if (!error && &script != &requested && reply.is_error_code("NOPERM"))
                         return send_checked(requested, script, std::move(evalsha), std::move(handler));
                     handler(error, std::move(reply));
                 });
    });
}

// The trusted twin was refused (by the ACL, or by its own check of a call it
// makes after its first write): the user's rights were narrowed since the
// connection asked (it checks again from this refusal on). Every twin checks,
// before its first write or publish, each call it makes after it
// (primitive/checked_calls.lua.part), so a refusal changed nothing; the
// checked script refuses before it writes, naming the command and its
// channel or key.
void Transport::send_checked(const Script& requested, const Script& twin, std::shared_ptr<ScriptRequest> evalsha,
                             ReplyHandler handler) {
    const std::string_view sha1 = twin.sha1;
    evalsha->bytes.replace(evalsha->bytes.find(sha1), sha1.size(), requested.sha1);
    ReplyReader reader;
    reader.feed(evalsha->bytes.data(), evalsha->bytes.size());
    const std::string key(routing_key(*reader.next()));
    send_script(requested, requested, std::move(evalsha), key, std::move(handler));
}

}  // namespace holdfast::detail
