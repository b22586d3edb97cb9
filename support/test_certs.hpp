// Certificates for TLS tests, made with the openssl command in a temp dir
// (removed on destruction). Short-lived EC keys: quick to make.
#pragma once

#include <string>

namespace holdfast::support {

struct TestCerts {
    /// Makes a CA, a server certificate it signed for IP:127.0.0.1 and
    /// DNS:localhost, a client certificate it signed, and an unrelated CA.
    /// Throws std::runtime_error with openssl's output if a step fails.
    TestCerts();
    ~TestCerts();
    TestCerts(const TestCerts&) = delete;
    TestCerts& operator=(const TestCerts&) = delete;

    /// A server certificate as server_cert (its key, names and CA), valid
    /// from `not_before` until `not_after` (YYYYMMDDHHMMSSZ, UTC): dates in
    /// the past make an expired one. Returns its file.
    std::string server_cert_valid(const std::string& not_before, const std::string& not_after) const;

    std::string dir;
    std::string ca;                       // PEM of the CA that signed server and client
    std::string server_cert, server_key;
    std::string client_cert, client_key;
    std::string other_ca;                 // a CA that signed nothing here
};

}  // namespace holdfast::support
