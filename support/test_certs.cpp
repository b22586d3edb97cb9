#include "test_certs.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace holdfast::support {

TestCerts::TestCerts() {
    char pattern[] = "/tmp/holdfast-certs-XXXXXX";
    if (!::mkdtemp(pattern)) throw std::runtime_error("TestCerts: mkdtemp failed");
    dir = pattern;
    ca = dir + "/ca.pem";
    server_cert = dir + "/server.pem";
    server_key = dir + "/server.key";
    client_cert = dir + "/client.pem";
    client_key = dir + "/client.key";
    other_ca = dir + "/other-ca.pem";
    const std::string script = R"(set -e
cd ")" + dir + R"("
key="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
openssl req -x509 $key -keyout ca.key -out ca.pem -days 2 -subj "/CN=holdfast test CA"
openssl req -x509 $key -keyout other-ca.key -out other-ca.pem -days 2 -subj "/CN=unrelated test CA"
openssl req $key -keyout server.key -out server.csr -subj "/CN=localhost"
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' > server.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile server.ext -out server.pem
openssl req $key -keyout client.key -out client.csr -subj "/CN=holdfast test client"
printf 'extendedKeyUsage=clientAuth\n' > client.ext
openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile client.ext -out client.pem
)";
    std::ofstream(dir + "/make.sh") << script;
    const std::string log = dir + "/openssl.log";
    if (std::system(("sh " + dir + "/make.sh >" + log + " 2>&1").c_str()) != 0) {
        std::ifstream in(log);
        std::stringstream text;
        text << in.rdbuf();
        throw std::runtime_error("TestCerts: openssl failed:\n" + text.str());
    }
}

TestCerts::~TestCerts() {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
}

}  // namespace holdfast::support
