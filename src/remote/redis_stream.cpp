#include "remote/redis_stream.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>

namespace cudacore::detail {
namespace {

using Clock = RedisStream::Clock;

// OpenSSL's queued errors of this thread as one line (and the queue emptied), or `fallback`.
std::string openssl_errors(const char* fallback) {
    std::string text;
    while (const unsigned long code = ERR_get_error()) {
        char line[256];
        ERR_error_string_n(code, line, sizeof line);
        if (!text.empty()) text += "; ";
        text += line;
    }
    return text.empty() ? std::string(fallback) : text;
}

std::chrono::milliseconds left_until(Clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    return left.count() > 0 ? left : std::chrono::milliseconds(0);
}

bool is_ip_address(const std::string& host) {
    unsigned char address[sizeof(in6_addr)];
    return ::inet_pton(AF_INET, host.c_str(), address) == 1 ||
           ::inet_pton(AF_INET6, host.c_str(), address) == 1;
}

struct AddressesDeleter {
    void operator()(addrinfo* found) const noexcept { ::freeaddrinfo(found); }
};
using Addresses = std::unique_ptr<addrinfo, AddressesDeleter>;

// One lookup of a host name, shared by the thread that runs it and the caller that waits for it:
// whichever lets go last frees what was found.
struct Lookup {
    std::mutex mutex;
    std::condition_variable finished;
    bool done = false;
    int status = 0;
    Addresses found;
};

// The addresses of host:port, found by `deadline`, or null with `why` set. An IP address is
// converted at once; a name is looked up by getaddrinfo on a thread of its own, so that a
// resolver that does not answer (a name server gone: 5 s per server and try by resolv.conf's
// defaults) costs the caller no more than its deadline; the lookup then ends on its own.
Addresses resolve(const std::string& host, const std::string& service, Clock::time_point deadline,
                  std::string& why) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    auto failed = [&](int status) {
        why = "cannot resolve '" + host + "': " + ::gai_strerror(status);
        return Addresses();
    };
    if (is_ip_address(host)) {
        hints.ai_flags = AI_NUMERICHOST;
        addrinfo* found = nullptr;
        if (const int status = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); status != 0)
            return failed(status);
        return Addresses(found);
    }
    auto lookup = std::make_shared<Lookup>();
    try {
        std::thread([lookup, host, service, hints] {
            addrinfo* found = nullptr;
            const int status = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
            const std::lock_guard lock(lookup->mutex);
            lookup->status = status;
            lookup->found.reset(found);
            lookup->done = true;
            lookup->finished.notify_all();
        }).detach();
    } catch (const std::system_error& e) {
        why = "cannot resolve '" + host + "': no thread to look it up: " + e.what();
        return {};
    }
    std::unique_lock lock(lookup->mutex);
    if (!lookup->finished.wait_until(lock, deadline, [&] { return lookup->done; })) {
        why = "cannot resolve '" + host + "': no answer within the connect timeout";
        return {};
    }
    if (lookup->status != 0) return failed(lookup->status);
    return std::move(lookup->found);
}

// A non-blocking TCP socket connected to host:port within `deadline`, or -1 with `why` set.
int connect_tcp(const std::string& host, int port, Clock::time_point deadline, std::string& why) {
    const Addresses found = resolve(host, std::to_string(port), deadline, why);
    if (!found) return -1;
    int fd = -1;
    for (const addrinfo* address = found.get(); address != nullptr && fd < 0; address = address->ai_next) {
        fd = ::socket(address->ai_family, address->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                      address->ai_protocol);
        if (fd < 0) {
            why = std::string("socket: ") + std::strerror(errno);
            continue;
        }
        int error = 0;
        if (::connect(fd, address->ai_addr, address->ai_addrlen) != 0) {
            error = errno;
            if (error == EINPROGRESS) {
                pollfd waiting{fd, POLLOUT, 0};
                const int ready = ::poll(&waiting, 1, static_cast<int>(left_until(deadline).count()));
                socklen_t length = sizeof error;
                if (ready == 0) {
                    error = ETIMEDOUT;
                } else if (ready < 0 || ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0) {
                    error = errno;
                }
            }
        }
        if (error != 0) {
            why = std::string("connect: ") + std::strerror(error);
            ::close(fd);
            fd = -1;
        }
    }
    if (fd >= 0) {
        const int on = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
        ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);  // notice a vanished peer
    }
    return fd;
}


}  // namespace

RedisStream::RedisStream(const RemoteCacheOptions& options, const std::string& server,
                         Clock::time_point deadline)
    : server_(server) {
    std::string why;
    fd_ = connect_tcp(options.host, options.port, deadline, why);
    if (fd_ < 0) {
        throw RedisFailure(RedisFailure::Kind::connect, "connect",
                           "cannot connect to " + server_ + ": " + why);
    }
    if (!options.tls) return;
    try {
        connect_tls(options, deadline);
    } catch (...) {
        // The destructor does not run: free what was made.
        if (ssl_ != nullptr) SSL_free(ssl_);
        if (context_ != nullptr) SSL_CTX_free(context_);
        ::close(fd_);
        ERR_clear_error();
        throw;
    }
}

void RedisStream::connect_tls(const RemoteCacheOptions& options, Clock::time_point deadline) {
    auto fail = [&](const std::string& why) -> RedisFailure {
        return RedisFailure(RedisFailure::Kind::connect, "TLS",
                            "cannot connect to " + server_ + ": " + why);
    };
    ERR_clear_error();
    context_ = SSL_CTX_new(TLS_client_method());
    if (context_ == nullptr) throw fail(openssl_errors("SSL_CTX_new failed"));
    SSL_CTX_set_min_proto_version(context_, TLS1_2_VERSION);
    SSL_CTX_set_verify(context_, SSL_VERIFY_PEER, nullptr);
    const int trusted = options.tls_ca_file.empty()
                            ? SSL_CTX_set_default_verify_paths(context_)
                            : SSL_CTX_load_verify_locations(context_, options.tls_ca_file.c_str(), nullptr);
    if (trusted != 1) {
        throw fail("cannot load the CA certificates " +
                   (options.tls_ca_file.empty() ? std::string("of the system")
                                                : "'" + options.tls_ca_file + "'") +
                   ": " + openssl_errors("no certificate"));
    }
    if (!options.tls_cert_file.empty()) {
        const std::string& key = options.tls_key_file.empty() ? options.tls_cert_file : options.tls_key_file;
        if (SSL_CTX_use_certificate_chain_file(context_, options.tls_cert_file.c_str()) != 1 ||
            SSL_CTX_use_PrivateKey_file(context_, key.c_str(), SSL_FILETYPE_PEM) != 1 ||
            SSL_CTX_check_private_key(context_) != 1) {
            throw fail("cannot use the client certificate '" + options.tls_cert_file +
                       "' with the key '" + key + "': " + openssl_errors("rejected"));
        }
    }
    ssl_ = SSL_new(context_);
    if (ssl_ == nullptr || SSL_set_fd(ssl_, fd_) != 1) throw fail(openssl_errors("SSL_new failed"));
    // The certificate must name the host the URL names: its DNS name, or its IP address.
    const bool named = is_ip_address(options.host)
                           ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_), options.host.c_str()) == 1
                           : SSL_set_tlsext_host_name(ssl_, options.host.c_str()) == 1 &&
                                 SSL_set1_host(ssl_, options.host.c_str()) == 1;
    if (!named) throw fail("cannot check the certificate against '" + options.host + "'");
    for (;;) {
        ERR_clear_error();
        const int result = SSL_connect(ssl_);
        if (result == 1) break;
        const int error = SSL_get_error(ssl_, result);
        if ((error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) &&
            wait(error == SSL_ERROR_WANT_READ, deadline)) {
            continue;
        }
        if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE)
            throw fail("the TLS handshake took longer than the connect timeout");
        const long verified = SSL_get_verify_result(ssl_);
        if (verified != X509_V_OK) {
            throw fail(std::string("the server's certificate is not trusted: ") +
                       X509_verify_cert_error_string(verified));
        }
        const int saved_errno = errno;
        throw fail("the TLS handshake failed: " +
                   openssl_errors(error == SSL_ERROR_SYSCALL && saved_errno != 0
                                      ? std::strerror(saved_errno)
                                      : "the server closed the connection"));
    }
}

RedisStream::~RedisStream() {
    if (ssl_ != nullptr) {
        SSL_shutdown(ssl_);  // one try at the close notice: the socket does not block
        SSL_free(ssl_);
    }
    if (fd_ >= 0) ::close(fd_);
    if (context_ != nullptr) SSL_CTX_free(context_);
    if (ssl_ != nullptr || context_ != nullptr) ERR_clear_error();
}

bool RedisStream::wait(bool for_read, Clock::time_point deadline) const {
    pollfd waiting{fd_, static_cast<short>(for_read ? POLLIN : POLLOUT), 0};
    for (;;) {
        const auto left = left_until(deadline);
        if (left.count() == 0 && Clock::now() >= deadline) return false;
        // Rounded up, so that the last milliseconds are waited for, not spun through.
        const int ready = ::poll(&waiting, 1, static_cast<int>(left.count()) + 1);
        if (ready > 0) return true;
        if (ready < 0 && errno != EINTR) return false;
    }
}

void RedisStream::timed_out(bool writing) const {
    throw RedisFailure(RedisFailure::Kind::timeout, "timeout",
                       std::string(writing ? "writing to " : "reading from ") + server_ +
                           " did not finish within the operation timeout");
}

void RedisStream::write_all(std::string_view bytes, Clock::time_point deadline) {
    while (!bytes.empty())
        bytes.remove_prefix(transfer(true, const_cast<char*>(bytes.data()), bytes.size(), deadline));
}

std::size_t RedisStream::read_some(char* buffer, std::size_t size, Clock::time_point deadline) {
    return transfer(false, buffer, size, deadline);
}

std::size_t RedisStream::transfer_plain(bool writing, char* data, std::size_t size,
                                        Clock::time_point deadline) {
    for (;;) {
        const ssize_t done = writing ? ::send(fd_, data, size, MSG_NOSIGNAL | MSG_DONTWAIT)
                                     : ::recv(fd_, data, size, MSG_DONTWAIT);
        if (done > 0) return static_cast<std::size_t>(done);
        const int error = errno;
        if (done < 0 && (error == EAGAIN || error == EWOULDBLOCK || error == EINTR)) {
            if (error == EINTR || wait(!writing, deadline)) continue;
            timed_out(writing);
        }
        if (done == 0 || error == ECONNRESET || error == EPIPE) {
            throw RedisFailure(RedisFailure::Kind::lost, "connection lost",
                               server_ + " closed the connection" +
                                   (done == 0 ? std::string() : std::string(": ") + std::strerror(error)));
        }
        throw RedisFailure(RedisFailure::Kind::io, "I/O error",
                           std::string(writing ? "writing to " : "reading from ") + server_ +
                               " failed: " + std::strerror(error));
    }
}

std::size_t RedisStream::transfer(bool writing, char* data, std::size_t size,
                                  Clock::time_point deadline) {
    // Checked before each transfer too, not only when the socket makes us wait: a server that
    // streams without pause must not outrun the bound either.
    if (Clock::now() >= deadline) timed_out(writing);
    if (ssl_ == nullptr) return transfer_plain(writing, data, size, deadline);
    const int chunk = static_cast<int>(std::min<std::size_t>(size, 1 << 30));
    const char* doing = writing ? "writing to " : "reading from ";
    for (;;) {
        ERR_clear_error();
        const int done = writing ? SSL_write(ssl_, data, chunk) : SSL_read(ssl_, data, chunk);
        if (done > 0) return static_cast<std::size_t>(done);
        const int error = SSL_get_error(ssl_, done);
        const int saved_errno = errno;
        if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) {
            if (wait(error == SSL_ERROR_WANT_READ, deadline)) continue;
            timed_out(writing);
        }
        if (error == SSL_ERROR_ZERO_RETURN ||
            (error == SSL_ERROR_SYSCALL &&
             (saved_errno == 0 || saved_errno == EPIPE || saved_errno == ECONNRESET))) {
            // A server that refuses the client (no client certificate, under TLS 1.3 only after
            // the handshake) says why in an alert before it closes: read it when a write fails.
            std::string why;
            if (writing) {
                char scrap[256];
                ERR_clear_error();
                const int read = SSL_read(ssl_, scrap, sizeof scrap);
                if (read <= 0 && SSL_get_error(ssl_, read) == SSL_ERROR_SSL) why = ": " + openssl_errors("");
            }
            throw RedisFailure(RedisFailure::Kind::lost, "connection lost",
                               server_ + " closed the connection" + why);
        }
        throw RedisFailure(RedisFailure::Kind::io, "I/O error",
                           doing + server_ + " failed: " + openssl_errors(std::strerror(saved_errno)));
    }
}

}  // namespace cudacore::detail
