// The transport of RedisConnection: a non-blocking TCP connection to the server, encrypted by
// OpenSSL for a rediss:// server (its certificate verified against a CA file, or the system's, and
// its name against the host). Every step waits until a deadline the caller gives for the whole
// exchange, never a timeout per read: a server that trickles its bytes cannot stretch a call.
// hiredis formats the commands and parses the replies (Debian 12's hiredis 0.14 has no TLS of its
// own, and its blocking calls bound each read only). Throws RedisFailure (redis_connection.hpp).
// Internal; not thread-safe (one connection, one user).
#pragma once

#include "remote/redis_connection.hpp"

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

struct ssl_st;
struct ssl_ctx_st;

namespace cudacore::detail {

class RedisStream {
public:
    using Clock = std::chrono::steady_clock;

    // Connects to options.host:options.port by `deadline` (TCP, and with options.tls the TLS
    // handshake and the server's verification). Throws RedisFailure (Kind::connect, cause "TLS"
    // for a handshake or certificate failure, "connect" for TCP) naming `server`. A host name is
    // resolved by the same deadline (getaddrinfo on a thread of its own, left to end by itself
    // when the deadline passes first).
    RedisStream(const RemoteCacheOptions& options, const std::string& server, Clock::time_point deadline);
    ~RedisStream();
    RedisStream(const RedisStream&) = delete;
    RedisStream& operator=(const RedisStream&) = delete;

    // Writes all of `bytes` by `deadline`. Throws RedisFailure (lost, timeout or io); over TLS
    // the caller holds SIGPIPE back (a plain socket is written with MSG_NOSIGNAL).
    void write_all(std::string_view bytes, Clock::time_point deadline);
    // Reads at least one byte into `buffer` (up to `size`) by `deadline`. Throws RedisFailure:
    // lost when the server closed the connection, timeout past the deadline.
    std::size_t read_some(char* buffer, std::size_t size, Clock::time_point deadline);

private:
    void connect_tls(const RemoteCacheOptions& options, Clock::time_point deadline);
    // One write (or read) of up to `size` bytes, retried while the socket is not ready; the
    // bytes it moved.
    std::size_t transfer(bool writing, char* data, std::size_t size, Clock::time_point deadline);
    std::size_t transfer_plain(bool writing, char* data, std::size_t size, Clock::time_point deadline);
    // Waits for the socket to be readable (or writable) until `deadline`; false when it was not.
    bool wait(bool for_read, Clock::time_point deadline) const;
    [[noreturn]] void timed_out(bool writing) const;

    std::string server_;
    int fd_ = -1;
    ssl_ctx_st* context_ = nullptr;  // both null for plain TCP
    ssl_st* ssl_ = nullptr;
};

}  // namespace cudacore::detail
