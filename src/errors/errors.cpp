// holdfast's error category, and the codes of Redis's error replies.
#include "holdfast/errors.hpp"

#include <array>
#include <utility>

namespace holdfast {

namespace {

class Category final : public std::error_category {
public:
    const char* name() const noexcept override { return "holdfast"; }

    std::string message(int value) const override {
        switch (static_cast<errc>(value)) {
            case errc::not_connected: return "no connection to the server";
            case errc::connection_lost: return "the connection was lost with the command in flight";
            case errc::reply_timeout: return "no reply within the timeout";
            case errc::client_closed: return "the client is shutting down";
            case errc::auth_refused: return "the server refused the credentials or the database";
            case errc::tls_failed: return "TLS failed";
            case errc::protocol_error: return "the peer does not speak RESP";
            case errc::server_error: return "the server answered with an error";
            case errc::wrong_type: return "the key holds another type";
            case errc::out_of_memory: return "the server is out of memory";
            case errc::no_permission: return "the server's ACL refuses it";
            case errc::cross_slot: return "the keys are in different cluster slots";
            case errc::try_again: return "a cluster slot is being migrated";
            case errc::read_only: return "a replica refused a write";
            case errc::cluster_down: return "the cluster is down";
            case errc::busy: return "the server is busy running a script";
            case errc::loading: return "the server is loading its data";
            case errc::master_down: return "the replica lost its master";
            case errc::count_overflow: return "the count would leave the 64-bit range";
            case errc::not_owner: return "the owner does not hold it";
            case errc::lease_lost: return "the hold's lease was lost";
            case errc::deadlock: return "the wait would wait for itself";
            case errc::replicas_unconfirmed: return "no replica acknowledged the write";
        }
        return "unknown holdfast error";
    }

    // As std::unique_lock and the OS would say it, where they have a word for it.
    std::error_condition default_error_condition(int value) const noexcept override {
        switch (static_cast<errc>(value)) {
            case errc::not_connected: return std::errc::not_connected;
            case errc::connection_lost: return std::errc::connection_reset;
            case errc::reply_timeout: return std::errc::timed_out;
            case errc::client_closed: return std::errc::operation_canceled;
            case errc::protocol_error: return std::errc::protocol_error;
            case errc::out_of_memory: return std::errc::not_enough_memory;
            case errc::no_permission: return std::errc::permission_denied;
            case errc::try_again: return std::errc::resource_unavailable_try_again;
            case errc::busy: return std::errc::device_or_resource_busy;
            case errc::count_overflow: return std::errc::value_too_large;
            case errc::not_owner:
            case errc::lease_lost: return std::errc::operation_not_permitted;
            case errc::deadlock: return std::errc::resource_deadlock_would_occur;
            default: return {value, *this};
        }
    }
};

}  // namespace

const std::error_category& error_category() noexcept {
    static const Category category;
    return category;
}

errc errc_of_reply(std::string_view reply_code) noexcept {
    static constexpr std::array<std::pair<std::string_view, errc>, 11> known{{
        {"WRONGTYPE", errc::wrong_type},
        {"OOM", errc::out_of_memory},
        {"NOPERM", errc::no_permission},
        {"CROSSSLOT", errc::cross_slot},
        {"TRYAGAIN", errc::try_again},
        {"READONLY", errc::read_only},
        {"CLUSTERDOWN", errc::cluster_down},
        {"BUSY", errc::busy},
        {"LOADING", errc::loading},
        {"MASTERDOWN", errc::master_down},
        {"OVERFLOW", errc::count_overflow},
    }};
    for (const auto& [word, code] : known)
        if (word == reply_code) return code;
    return errc::server_error;
}

}  // namespace holdfast
