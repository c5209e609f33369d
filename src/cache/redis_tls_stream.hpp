// The TLS transport of RedisConnection for rediss:// servers: a TCP connection encrypted by
// OpenSSL, the server's certificate verified against a CA file (or the system's) and its name
// against the host, each step bounded by a timeout. Debian 12's hiredis (0.14) has no TLS of its
// own, so hiredis formats the commands and parses the replies and this stream carries the bytes.
// Throws RedisFailure (redis_connection.hpp). Internal; not thread-safe (one connection, one user).
#pragma once

#include "cache/redis_connection.hpp"

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

struct ssl_st;
struct ssl_ctx_st;

namespace cudacore::detail {

class RedisTlsStream {
public:
    // Connects to options.host:options.port within options.connect_timeout (TCP and the TLS
    // handshake together) and verifies the server. Throws RedisFailure (Kind::connect, cause
    // "TLS" for a handshake or certificate failure, "connect" for TCP) naming `server`.
    RedisTlsStream(const RemoteCacheOptions& options, const std::string& server);
    ~RedisTlsStream();
    RedisTlsStream(const RedisTlsStream&) = delete;
    RedisTlsStream& operator=(const RedisTlsStream&) = delete;

    // Writes all of `bytes`, waiting at most `timeout` each time the socket is not ready.
    // Throws RedisFailure (lost, timeout or io); the caller holds SIGPIPE back.
    void write_all(std::string_view bytes, std::chrono::milliseconds timeout);
    // Reads at least one byte into `buffer` (up to `size`), waiting at most `timeout`. Throws
    // RedisFailure: lost when the server closed the connection.
    std::size_t read_some(char* buffer, std::size_t size, std::chrono::milliseconds timeout);

private:
    // One SSL_write (or SSL_read) of up to `size` bytes, retried while the socket is not ready
    // (each wait at most `timeout`); the bytes it moved.
    std::size_t transfer(bool writing, char* data, std::size_t size, std::chrono::milliseconds timeout);
    // Waits for the socket to be readable (or writable) until `timeout`; false when it was not.
    bool wait(bool for_read, std::chrono::milliseconds timeout) const;

    std::string server_;
    int fd_ = -1;
    ssl_ctx_st* context_ = nullptr;
    ssl_st* ssl_ = nullptr;
};

}  // namespace cudacore::detail
