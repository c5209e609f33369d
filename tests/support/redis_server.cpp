#include "redis_server.hpp"

#include "support/child_process.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>

namespace cudacore::test {
namespace {

namespace fs = std::filesystem;

std::string find_redis_server() {
    const char* path = std::getenv("PATH");
    std::stringstream folders(path ? path : "");
    std::string folder;
    while (std::getline(folders, folder, ':')) {
        if (folder.empty()) continue;
        const fs::path candidate = fs::path(folder) / "redis-server";
        if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    for (const char* fixed : {"/usr/bin/redis-server", "/usr/sbin/redis-server"})
        if (::access(fixed, X_OK) == 0) return fixed;
    return "";
}

// A loopback port nobody listens on now (the kernel's choice for port 0).
int free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw std::runtime_error("socket failed");
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    socklen_t length = sizeof address;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
        ::close(fd);
        throw std::runtime_error("bind to a loopback port failed");
    }
    ::close(fd);
    return ntohs(address.sin_port);
}

bool accepts_connections(int port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    const bool connected = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
    ::close(fd);
    return connected;
}

std::string read_log(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace

std::string make_tls_files(const fs::path& dir) {
    {
        std::ofstream ext(dir / "server.ext", std::ios::trunc);
        ext << "subjectAltName=IP:127.0.0.1\n";
    }
    const char* const script =
        "set -e; cd \"$1\"; "
        "key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out \"$1\"; }; "
        "for ca in ca other_ca; do key $ca.key; "
        "  openssl req -x509 -new -key $ca.key -out $ca.crt -days 2 -subj /CN=cudacore-test-$ca; done; "
        "key server.key; openssl req -new -key server.key -out server.csr -subj /CN=127.0.0.1; "
        "openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -set_serial 1 -days 2 "
        "  -extfile server.ext -out server.crt; "
        "key client.key; openssl req -new -key client.key -out client.csr -subj /CN=cudacore-client; "
        "openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -set_serial 2 -days 2 "
        "  -out client.crt";
    // Every answer is on the command line: nothing reads the terminal.
    detail::ChildProcessOptions limit;
    limit.timeout = std::chrono::seconds(60);
    detail::ChildProcessResult made;
    try {
        made = detail::run_child_process("/bin/sh", {"-c", script, "sh", dir.string()}, limit);
    } catch (const std::system_error& e) {
        return std::string("cannot run /bin/sh to make TLS files: ") + e.what();
    }
    if (!made.crashed() && made.exit_code == 0) return "";
    return "cannot make TLS files with the openssl command (" + made.how_it_ended() + "): " + made.err;
}

std::string RedisServer::unavailable_reason() {
    return find_redis_server().empty() ? "redis-server is not installed (scripts/setup.sh installs it)"
                                       : "";
}

RedisServer::RedisServer(std::string extra_config, Tls tls) : config_(std::move(extra_config)) {
    tls_config_ = "tls-cert-file " + tls.certificate.string() + "\n" + "tls-key-file " +
                  tls.key.string() + "\n" + "tls-ca-cert-file " + tls.ca.string() + "\n" +
                  "tls-auth-clients " + (tls.require_client_certificate ? "yes" : "no") + "\n";
    start_in_new_directory();
}

RedisServer::RedisServer(std::string extra_config) : config_(std::move(extra_config)) {
    start_in_new_directory();
}

void RedisServer::start_in_new_directory() {
    char pattern[] = "/tmp/cudacore-redis-XXXXXX";
    if (::mkdtemp(pattern) == nullptr) throw std::runtime_error("mkdtemp failed");
    directory_ = pattern;
    // A port can be taken between free_port() and the server's bind: try a few.
    for (int attempt = 0;; ++attempt) {
        port_ = free_port();
        try {
            launch();
            return;
        } catch (const std::runtime_error&) {
            if (attempt == 4) {
                std::error_code ignored;
                fs::remove_all(directory_, ignored);
                throw;
            }
        }
    }
}

RedisServer::~RedisServer() {
    stop();
    std::error_code ignored;
    fs::remove_all(directory_, ignored);
}

std::string RedisServer::url(const std::string& credentials, const std::string& query) const {
    std::string url = tls_config_.empty() ? "redis://" : "rediss://";
    if (!credentials.empty()) url += credentials + "@";
    url += "127.0.0.1:" + std::to_string(port_) + "/0";
    if (!query.empty()) url += "?" + query;
    return url;
}

void RedisServer::launch() {
    const fs::path config = directory_ / "redis.conf";
    const fs::path log = directory_ / "redis.log";
    {
        std::ofstream out(config, std::ios::trunc);
        // A TLS server listens with TLS only, on the port a plain one would use.
        if (tls_config_.empty()) {
            out << "port " << port_ << "\n";
        } else {
            out << "port 0\n" << "tls-port " << port_ << "\n" << tls_config_;
        }
        out << "bind 127.0.0.1\n"
            << "protected-mode yes\n"
            << "daemonize no\n"
            << "dir " << directory_.string() << "\n"
            << "logfile " << log.string() << "\n"
            << "save \"\"\n"
            << "appendonly no\n"
            << config_ << "\n";
    }
    const std::string program = find_redis_server();
    if (program.empty()) throw std::runtime_error(unavailable_reason());
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
        // Ends with the test, however it ends.
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) ::_exit(127);
        ::execl(program.c_str(), program.c_str(), config.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    pid_ = pid;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
        int status = 0;
        if (::waitpid(pid_, &status, WNOHANG) == pid_) {
            pid_ = -1;
            throw std::runtime_error("redis-server exited at start: " + read_log(log));
        }
        if (accepts_connections(port_)) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    kill();
    throw std::runtime_error("redis-server did not accept connections in 10 s: " + read_log(log));
}

void RedisServer::kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
}

void RedisServer::stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < deadline) {
        if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
            pid_ = -1;
            return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    kill();
}

void RedisServer::start() {
    if (pid_ > 0) return;
    for (int attempt = 0;; ++attempt) {
        try {
            launch();
            return;
        } catch (const std::runtime_error&) {
            // The port may linger a moment after a kill; then another port.
            if (attempt == 4) throw;
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
    }
}

}  // namespace cudacore::test
