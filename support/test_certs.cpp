#include "test_certs.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace holdfast::support {
namespace {

// Runs `script` with sh in `dir`; throws with openssl's output if it fails.
void run(const std::string& dir, const std::string& name, const std::string& script) {
    std::ofstream(dir + "/" + name + ".sh") << "set -e\ncd \"" << dir << "\"\n" << script;
    const std::string log = dir + "/" + name + ".log";
    if (std::system(("sh " + dir + "/" + name + ".sh >" + log + " 2>&1").c_str()) != 0) {
        std::ifstream in(log);
        std::stringstream text;
        text << in.rdbuf();
        throw std::runtime_error("TestCerts: openssl failed:\n" + text.str());
    }
}

}  // namespace

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
    run(dir, "make", R"(key="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
openssl req -x509 $key -keyout ca.key -out ca.pem -days 2 -subj "/CN=holdfast test CA"
openssl req -x509 $key -keyout other-ca.key -out other-ca.pem -days 2 -subj "/CN=unrelated test CA"
openssl req $key -keyout server.key -out server.csr -subj "/CN=localhost"
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' > server.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile server.ext -out server.pem
openssl req $key -keyout client.key -out client.csr -subj "/CN=holdfast test client"
printf 'extendedKeyUsage=clientAuth\n' > client.ext
openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile client.ext -out client.pem
)");
}

// `openssl x509 -req` takes only a number of days from now; `openssl ca` takes
// any dates, with a database of its own (one per certificate here).
std::string TestCerts::server_cert_valid(const std::string& not_before, const std::string& not_after) const {
    const std::string name = "server-" + not_before + "-" + not_after;
    run(dir, name, "mkdir " + name + R"(.db
cd )" + name + R"(.db
: > index.txt
printf '[ca]\ndefault_ca = test\n[test]\ndatabase = index.txt\nnew_certs_dir = .\nserial = serial\n' > ca.cnf
printf 'default_md = sha256\npolicy = any\nunique_subject = no\n[any]\ncommonName = supplied\n' >> ca.cnf
openssl ca -batch -config ca.cnf -rand_serial -cert ../ca.pem -keyfile ../ca.key -in ../server.csr \
    -extfile ../server.ext -notext -startdate )" + not_before + " -enddate " + not_after + " -out ../" + name +
                       ".pem\n");
    return dir + "/" + name + ".pem";
}

TestCerts::~TestCerts() {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
}

}  // namespace holdfast::support
