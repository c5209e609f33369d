// One connection to a Redis server through hiredis, for RemoteProgramCache: connect with a
// timeout, AUTH and SELECT, then commands bounded by the operation timeout. A peer that resets
// the connection while a command is written never raises SIGPIPE in the process. A rediss://
// server is reached through RedisTlsStream (redis_tls_stream.hpp), hiredis formatting the
// commands and reading the replies.
#pragma once

#include "cudacore/remote_program_cache.hpp"

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

struct redisContext;
struct redisReader;
struct redisReply;

namespace cudacore::detail {

// Why a connection could not be used. `cause` is short and stable (one warning per cause);
// what() is the full message.
class RedisFailure : public std::runtime_error {
public:
    enum class Kind {
        connect,  // connect, AUTH or SELECT failed: the server cannot be used now
        lost,     // the server closed or reset the connection (EOF, ECONNRESET, EPIPE)
        timeout,  // a read or write took longer than the operation timeout
        io,       // any other I/O or protocol error
    };
    RedisFailure(Kind kind, std::string cause, const std::string& message)
        : std::runtime_error(message), kind(kind), cause(std::move(cause)) {}
    Kind kind;
    std::string cause;
};

struct RedisReplyDeleter {
    void operator()(redisReply* reply) const noexcept;
};
using RedisReply = std::unique_ptr<redisReply, RedisReplyDeleter>;

// A reply's kind and contents, read without the caller including hiredis.
enum class RedisReplyType { string, array, integer, nil, status, error, other };
RedisReplyType reply_type(const redisReply& reply) noexcept;
std::string_view reply_text(const redisReply& reply) noexcept;  // string, status, error
long long reply_integer(const redisReply& reply) noexcept;
std::size_t reply_elements(const redisReply& reply) noexcept;
const redisReply& reply_element(const redisReply& reply, std::size_t i) noexcept;

class RedisTlsStream;

class RedisConnection {
public:
    // Connects within options.connect_timeout, then AUTHs (when a password is set) and SELECTs
    // (a database other than 0). Throws RedisFailure (Kind::connect) naming the server.
    explicit RedisConnection(const RemoteCacheOptions& options);
    ~RedisConnection();
    RedisConnection(const RedisConnection&) = delete;
    RedisConnection& operator=(const RedisConnection&) = delete;

    // Sends one command and reads its reply (an error reply is a reply, not a failure). Throws
    // RedisFailure on an I/O failure or timeout, after which the connection is broken().
    RedisReply command(const std::vector<std::string_view>& arguments);
    bool broken() const noexcept { return broken_; }

private:
    RedisReply tls_command(const std::vector<std::string_view>& arguments);

    redisContext* context_ = nullptr;          // plain TCP: hiredis's own connection
    std::unique_ptr<RedisTlsStream> tls_;  // TLS: the stream, and a reader for its replies
    redisReader* reader_ = nullptr;
    std::chrono::milliseconds operation_timeout_;
    std::string server_;
    bool broken_ = false;
};

}  // namespace cudacore::detail
