#include "transport/cluster.hpp"

#include <algorithm>
#include <future>

#include "errors/failure.hpp"
#include "holdfast/errors.hpp"
#include "transport/command.hpp"

namespace holdfast::detail {

namespace {

// A command parked for a retry when the client closed.
Failure not_sent() { return client_closed("; the command was not sent"); }

// Runs one command and waits for its outcome; the connection's timeout bounds
// the wait, and a failed connect ends it (a seed refusing: the next is tried).
std::pair<Failure, Reply> call(Connection& connection, std::initializer_list<std::string_view> args) {
    std::promise<std::pair<Failure, Reply>> outcome;
    auto future = outcome.get_future();
    connection.submit_one_attempt(encode_command(args), [&outcome](Failure error, Reply reply) {
        outcome.set_value({error, std::move(reply)});
    });
    return future.get();
}

}  // namespace

struct Cluster::Request {
    Cluster* cluster = nullptr;
    Node* node = nullptr;  // where it was last sent
    std::size_t slot;  // cluster_slots: any master
    std::size_t pick;  // which of the node's connections: the same for one key
    std::string encoded;
    ReplyHandler handler;
    int redirects = 0;
    // Sent: a master down or a CLUSTERDOWN (a failover under way) is waited
    // out until since + Config::timeout.
    std::chrono::steady_clock::time_point since = std::chrono::steady_clock::now();
    // Taken from the front of its slot's parked queue: if it must wait again,
    // it goes back to the front.
    bool resumed = false;
};

Cluster::Cluster(asio::io_context& io, const Config& config)
    : io_(io), config_(config), refresh_timer_(io), scan_timer_(io), parked_timer_(io) {}

std::shared_ptr<Connection> Cluster::new_connection(const ServerAddress& node) const {
    Config c = config_;
    c.topology = Topology::single;
    c.host = node.host;
    c.port = node.port;
    c.servers.clear();
    auto connection = std::make_shared<Connection>(io_, c);
    // A seed is the user's address; any other node's, the cluster's word.
    connection->cluster_announced =
        std::find(config_.servers.begin(), config_.servers.end(), node) == config_.servers.end();
    return connection;
}

ClusterMap::Node Cluster::node_index_locked(const ServerAddress& address) {
    const auto index = map_.add(address);
    connect_new_nodes_locked();
    return index;
}

void Cluster::connect_new_nodes_locked() {
    while (nodes_.size() < map_.node_count()) {
        auto node = std::make_unique<Node>();
        node->address = map_.address(static_cast<ClusterMap::Node>(nodes_.size()));
        const auto index = nodes_.size();
        for (std::size_t i = 0; i < config_.pool_size(); ++i) {
            node->pool.push_back(new_connection(node->address));
            node->pool.back()->on_ready = [this, index] {
                std::lock_guard lock(mutex_);
                nodes_[index]->down = false;
            };
            node->pool.back()->on_lost = [this, index] {
                {
                    std::lock_guard lock(mutex_);
                    nodes_[index]->down = true;
                }
                refresh();  // it may have failed over: read the map again, and soon again
                asio::post(io_, [this] { scan_later(); });
            };
            node->pool.back()->start();
        }
        nodes_.push_back(std::move(node));
    }
}

std::shared_ptr<Connection> Cluster::connection(const ServerAddress& address, std::size_t pick) {
    std::lock_guard lock(mutex_);
    const auto& pool = nodes_[node_index_locked(address)]->pool;
    return pool[pick % pool.size()];
}

std::shared_ptr<Connection> Cluster::connection_for(std::string_view key) {
    std::lock_guard lock(mutex_);
    const auto& pool = nodes_[owner_index_locked(key_slot(key))]->pool;
    return pool[std::hash<std::string_view>{}(key) % pool.size()];
}

void Cluster::send_to(const ServerAddress& master, std::string_view encoded, ReplyHandler handler) {
    connection(master, 0)->submit(encoded, std::move(handler));
}

ClusterMap::Node Cluster::owner_index_locked(std::size_t slot) const {
    const auto index = map_.route(slot);
    if (!index) throw std::out_of_range("holdfast: the cluster's slot map names no node");
    return *index;
}

ServerAddress Cluster::owner(std::size_t slot) const {
    std::lock_guard lock(mutex_);
    return nodes_[owner_index_locked(slot)]->address;
}

std::vector<ServerAddress> Cluster::masters() const {
    std::lock_guard lock(mutex_);
    std::vector<ServerAddress> result;
    for (const auto index : map_.masters()) result.push_back(map_.address(index));
    return result;
}

void Cluster::discover() {
    std::string failures;
    for (const auto& seed : config_.servers) {
        auto [error, reply] = call(*connection(seed, 0), {"CLUSTER", "SLOTS"});
        if (error) {
            if (error.is(errc::auth_refused)) error.raise();  // other seeds would refuse the same credentials
            failures += "; " + error.message();
            continue;
        }
        if (reply.is_error())
            throw ServerError("holdfast: " + seed.name() + " refused CLUSTER SLOTS (" + reply.str +
                                  "); is it a cluster node? For one server, use a redis:// URL",
                              std::string(reply.code()));
        const auto ranges = parse_cluster_slots(reply, seed);
        if (ranges.empty()) {
            failures += "; " + seed.name() + " has no slot map yet (cluster not created?)";
            continue;
        }
        apply(ranges);
        // Redis 7 knows SHARDNUMSUB (and so SSUBSCRIBE); older servers refuse it.
        auto [probe_error, probe] = call(*connection(seed, 0), {"PUBSUB", "SHARDNUMSUB"});
        sharded_pubsub_ = !probe_error && probe.is_array();
        asio::post(io_, [this] { scan_later(); });
        return;
    }
    throw ConnectionError("holdfast: no seed of " + config_.server_name() + " gave the slot map" + failures +
                              "; check the seed addresses in the URL",
                          errc::not_connected);
}

bool Cluster::apply(const std::vector<SlotRange>& ranges) {
    std::lock_guard lock(mutex_);
    const bool changed = map_.assign(ranges);
    connect_new_nodes_locked();
    return changed;
}

void Cluster::send(std::string_view key, std::string encoded, ReplyHandler handler) {
    auto request = std::make_shared<Request>();
    request->slot = key.empty() ? cluster_slots : key_slot(key);
    request->pick = std::hash<std::string_view>{}(key);
    request->encoded = std::move(encoded);
    request->handler = std::move(handler);
    request->cluster = this;
    route(request, std::nullopt, false);
}

// The one place a cluster command finds its node: by slot, then by redirect.
// Node, down flag and connection in one look under the mutex: every command
// of every thread passes here.
void Cluster::route(const std::shared_ptr<Request>& request, std::optional<ServerAddress> to, bool asking) {
    Node* target;
    bool down;
    std::shared_ptr<Connection> connection;
    {
        std::lock_guard lock(mutex_);
        // Behind the slot's parked commands, never before them.
        if (!to && !request->resumed) {
            auto queue = parked_.find(request->slot);
            if (queue != parked_.end() && !queue->second.empty()) {
                queue->second.push_back(request);
                return;
            }
        }
        target = nodes_[to ? node_index_locked(*to) : owner_index_locked(request->slot)].get();
        down = target->down;
        connection = target->pool[request->pick % target->pool.size()];
    }
    const ServerAddress& node = target->address;  // a Node never moves nor changes address
    // A master whose connection was lost may be failing over: rather than
    // queue the command there, wait (reading the map) for the cluster to
    // promote its replica or for the connection to come back.
    if (!to && down) {
        if (std::chrono::steady_clock::now() - request->since < config_.timeout) return route_later(request, true);
        return request->handler(
            Failure(errc::not_connected,
                    "holdfast: no connection to master " + node.name() + " (slot " + std::to_string(request->slot) +
                        ") within " + std::to_string(config_.timeout.count()) +
                        " ms, and the cluster named no other; the command was not sent. Is the node down and its "
                        "replica not yet promoted (cluster-node-timeout)?"),
            Reply{});
    }
    request->node = target;
    auto on_reply = [request](Failure error, Reply reply) {
        request->cluster->on_reply(request, std::move(error), std::move(reply));
    };
    if (asking) connection->submit_asking(request->encoded, std::move(on_reply));
    else connection->submit(request->encoded, std::move(on_reply));
}

void Cluster::on_reply(const std::shared_ptr<Request>& request, Failure error, Reply reply) {
    const ServerAddress& node = request->node->address;
    if (error) {
        if (is_connection(error.code())) {
            std::lock_guard lock(mutex_);
            request->node->down = true;  // until a connection to it is ready again
        }
        refresh();  // a lost node may have failed over: read the map again
        return request->handler(error, Reply{});
    }
    if (request->redirects < max_redirects)
        if (auto redirect = parse_redirect(reply, node)) {
            ++request->redirects;
            if (redirect->moved) {
                {
                    std::lock_guard lock(mutex_);
                    map_.apply_redirect(*redirect);
                    connect_new_nodes_locked();
                }
                refresh();
            }
            return route(request, std::move(redirect->node), !redirect->moved);
        }
    if (reply.is_error_code("TRYAGAIN") && !stopped_ &&
        std::chrono::steady_clock::now() - request->since < config_.timeout)
        return route_later(request, false);
    // A primary failed and its replica not yet promoted: the command was
    // refused, not run; the cluster is whole again within an election.
    if (reply.is_error_code("CLUSTERDOWN") && !stopped_ &&
        std::chrono::steady_clock::now() - request->since < config_.timeout)
        return route_later(request, true);
    request->handler(nullptr, std::move(reply));
}

void Cluster::route_later(const std::shared_ptr<Request>& request, bool reread) {
    if (reread) refresh();
    bool arm = false;
    {
        std::lock_guard lock(mutex_);
        auto& queue = parked_[request->slot];
        if (request->resumed) queue.push_front(request);
        else queue.push_back(request);
        arm = !parked_armed_;
        parked_armed_ = true;
    }
    // The timer is the loop's: route_later() runs on callers' threads too.
    if (arm) asio::post(io_, [this] { arm_parked(); });
}

void Cluster::arm_parked() {
    parked_timer_.expires_after(try_again_after);
    parked_timer_.async_wait([this](asio::error_code ec) {
        if (!ec) route_parked();
    });
}

// Each slot's queue in order, up to the first command that must wait again:
// the commands behind it stay behind it.
void Cluster::route_parked() {
    std::vector<std::size_t> slots;
    {
        std::lock_guard lock(mutex_);
        parked_armed_ = false;
        for (const auto& [slot, queue] : parked_) slots.push_back(slot);
    }
    for (const std::size_t slot : slots) {
        for (;;) {
            std::shared_ptr<Request> request;
            {
                std::lock_guard lock(mutex_);
                auto queue = parked_.find(slot);
                if (queue == parked_.end()) break;
                if (queue->second.empty()) {
                    parked_.erase(queue);
                    break;
                }
                request = std::move(queue->second.front());
                queue->second.pop_front();
            }
            if (stopped_) {
                request->handler(not_sent(), Reply{});
                continue;
            }
            request->redirects = 0;  // each try may be redirected again (ASK)
            request->resumed = true;
            route(request, std::nullopt, false);
            request->resumed = false;
            std::lock_guard lock(mutex_);
            auto queue = parked_.find(slot);
            if (queue != parked_.end() && !queue->second.empty() && queue->second.front() == request) break;
        }
    }
}

void Cluster::refresh() {
    asio::post(io_, [this] {
        if (stopped_) return;
        if (reading_) {
            read_again_ = true;
            return;
        }
        reading_ = true;
        // Rate-limited: a migration can answer MOVED to every command.
        refresh_timer_.expires_at(last_read_ + min_refresh_interval);
        refresh_timer_.async_wait([this](asio::error_code ec) {
            if (ec || stopped_) return;
            read_map(0);
        });
    });
}

// Asks the masters (those connected first, so a dead one does not stall the
// read for a timeout), then the seeds, until one gives a map.
void Cluster::read_map(std::size_t attempt) {
    std::vector<ServerAddress> candidates = masters();
    std::stable_partition(candidates.begin(), candidates.end(),
                          [this](const ServerAddress& a) { return connection(a, 0)->ready(); });
    candidates.insert(candidates.end(), config_.servers.begin(), config_.servers.end());
    if (attempt >= candidates.size()) {
        reading_ = false;
        last_read_ = std::chrono::steady_clock::now();
        return;
    }
    const ServerAddress node = candidates[attempt];
    connection(node, 0)->submit(encode_command({"CLUSTER", "SLOTS"}),
                                [this, attempt, node](Failure error, Reply reply) {
                                    if (stopped_) return;
                                    const auto ranges = error ? std::vector<SlotRange>{}
                                                              : parse_cluster_slots(reply, node);
                                    if (ranges.empty()) return read_map(attempt + 1);
                                    apply(ranges);
                                    reading_ = false;
                                    last_read_ = std::chrono::steady_clock::now();
                                    if (on_refreshed) on_refreshed();
                                    if (read_again_) {
                                        read_again_ = false;
                                        refresh();
                                    }
                                });
}

void Cluster::scan_later() {
    if (stopped_) return;
    bool master_down = false;
    {
        std::lock_guard lock(mutex_);
        for (const auto index : map_.masters())
            if (nodes_[index]->down) {
                master_down = true;
                break;
            }
    }
    const auto interval = master_down ? std::max(min_refresh_interval, config_.cluster_scan_interval / 20)
                                      : config_.cluster_scan_interval;
    scan_timer_.expires_after(interval);
    scan_timer_.async_wait([this](asio::error_code ec) {
        if (ec || stopped_) return;
        refresh();
        scan_later();
    });
}

void Cluster::stop_now() {
    stopped_ = true;
    refresh_timer_.cancel();
    scan_timer_.cancel();
    parked_timer_.cancel();
    std::vector<std::shared_ptr<Connection>> all;
    std::vector<std::shared_ptr<Request>> waiting;
    {
        std::lock_guard lock(mutex_);
        for (auto& node : nodes_) all.insert(all.end(), node->pool.begin(), node->pool.end());
        for (auto& [slot, queue] : parked_) waiting.insert(waiting.end(), queue.begin(), queue.end());
        parked_.clear();
    }
    for (auto& request : waiting) request->handler(not_sent(), Reply{});
    for (auto& c : all) c->stop_now();
}

}  // namespace holdfast::detail
