// One connection to a Redis server, for RemoteProgramCache: connect, AUTH and SELECT by one
// deadline, then commands each bounded as a whole (the command sent and its whole reply read by a
// deadline, however the server trickles its bytes). The bytes travel through RedisStream (plain
// TCP or TLS, redis_stream.hpp); hiredis formats the commands and parses the replies. A reply is
// read no further than its header when it announces a value over max_entry_bytes, and never past
// max_entry_bytes (and a little) in all, so a server cannot make the client buffer more. A peer
// that resets the connection while a command is written never raises SIGPIPE in the process.
#pragma once

#include "cudacore/remote_cache_options.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

struct redisReader;
struct redisReply;
struct redisReplyObjectFunctions;

namespace cudacore::detail {

// Why a connection could not be used. `cause` is short and stable (one warning per cause);
// what() is the full message.
class RedisFailure : public std::runtime_error {
public:
    enum class Kind {
        connect,  // connect, AUTH or SELECT failed: the server cannot be used now
        lost,     // the server closed or reset the connection (EOF, ECONNRESET, EPIPE)
        timeout,  // the exchange did not finish by its deadline
        too_large,  // the reply announces (or holds) more than max_entry_bytes: not read further
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

class RedisStream;

// What the reply being read may still cost in memory. The reader's object functions
// (redis_connection.cpp) charge every object hiredis makes of it, at every nesting level: its
// struct, a string's bytes, an array's element slots; an array is refused from the count it
// announces (before hiredis allocates its slots) when that many elements cannot fit.
struct ReplyBudget {
    const redisReplyObjectFunctions* hiredis = nullptr;  // hiredis's own, which make the objects
    std::uint64_t left = 0;                              // bytes
    // Set when an object was refused: the bytes it needed at least, and for an array the
    // elements it announced (-1 for another object).
    std::uint64_t refused_bytes = 0;
    long long refused_elements = -1;
};

class RedisConnection {
public:
    using Clock = std::chrono::steady_clock;

    // Connects, AUTHs (when a password is set) and SELECTs (a database other than 0), all by
    // `deadline` (by default options.connect_timeout from now). Throws RedisFailure
    // (Kind::connect) naming the server. Bytes read are added to `bytes_received` when given
    // (it must outlive the connection).
    explicit RedisConnection(const RemoteCacheOptions& options,
                             std::atomic<std::uint64_t>* bytes_received = nullptr);
    RedisConnection(const RemoteCacheOptions& options, Clock::time_point deadline,
                    std::atomic<std::uint64_t>* bytes_received = nullptr);
    ~RedisConnection();
    RedisConnection(const RedisConnection&) = delete;
    RedisConnection& operator=(const RedisConnection&) = delete;

    // Sends one command and reads its whole reply by `deadline` (by default
    // options.operation_timeout from now); an error reply is a reply, not a failure. Throws
    // RedisFailure on an I/O failure, a timeout or a reply over max_entry_bytes (in bytes read
    // or in the memory its objects take: Kind::too_large), after which the connection is
    // broken().
    RedisReply command(const std::vector<std::string_view>& arguments);
    RedisReply command(const std::vector<std::string_view>& arguments, Clock::time_point deadline);
    bool broken() const noexcept { return broken_; }

private:
    RedisReply exchange(const std::vector<std::string_view>& arguments, Clock::time_point deadline);

    std::unique_ptr<RedisStream> stream_;
    redisReader* reader_ = nullptr;
    std::chrono::milliseconds operation_timeout_;
    std::uint64_t max_value_bytes_;  // the largest bulk string a reply may announce
    std::uint64_t max_reply_bytes_;  // the most bytes one reply may take, read or parsed
    ReplyBudget budget_;             // the reply being read (the reader's private data)
    std::atomic<std::uint64_t>* bytes_received_;
    std::string server_;
    bool broken_ = false;
};

}  // namespace cudacore::detail
