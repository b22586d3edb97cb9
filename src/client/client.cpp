#include "holdfast/client.hpp"

#include <future>

#include "core/client_core.hpp"

namespace holdfast {

Client::Client(const Config& config) : core_(std::make_unique<detail::ClientCore>(config)) {
    // Fail here, naming the server, rather than at the first lock.
    auto ready = std::make_shared<std::promise<void>>();
    auto done = ready->get_future();
    core_->transport.execute({}, {"PING"}, [ready](detail::Failure error, detail::Reply) {
        if (error) ready->set_exception(error.exception());
        else ready->set_value();
    });
    done.get();
}

Client::Client(std::string_view uri) : Client(Config::from_uri(uri)) {}

Client::~Client() = default;

const std::string& Client::id() const { return core_->uuid; }
std::string Client::current_owner() const { return core_->current_owner(); }
std::string Client::new_owner() { return core_->new_owner(); }
const Config& Client::config() const { return core_->transport.config(); }
Metrics Client::metrics() const { return core_->telemetry->snapshot(); }

}  // namespace holdfast
