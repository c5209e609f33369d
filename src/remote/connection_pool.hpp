// A RemoteProgramCache's idle connections to its server, reused by its calls: one command runs on
// a pooled connection, all of it by one deadline. A fork()ed child never uses its parent's
// sockets. Thread-safe.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

#include "remote/redis_connection.hpp"

namespace cudacore::detail {

class ConnectionPool {
public:
    using Clock = std::chrono::steady_clock;

    // `options` must outlive the pool (the cache's state holds both).
    explicit ConnectionPool(const RemoteCacheOptions& options);

    // The deadline of a call that runs one command: a connection made, then the command.
    Clock::time_point call_deadline() const;

    // Runs one command, all of it by `deadline` (call_deadline() by default). A pooled connection
    // the server has closed since (it restarted, or dropped idle clients) is replaced once by a
    // fresh one, and the other idle ones are dropped too. Throws RedisFailure (counted, but for a
    // reply over max_entry_bytes) when the server cannot be used.
    RedisReply run(const std::vector<std::string_view>& arguments,
                   std::optional<Clock::time_point> deadline = std::nullopt);

    std::atomic<std::uint64_t> connections_opened{0}, connection_failures{0}, command_failures{0},
        bytes_received{0};

private:
    std::unique_ptr<RedisConnection> acquire(bool& reused, Clock::time_point deadline);
    void release(std::unique_ptr<RedisConnection> connection);
    void drop_idle();

    const RemoteCacheOptions& options_;
    std::mutex mutex_;
    std::vector<std::unique_ptr<RedisConnection>> idle_;
    pid_t pid_;  // the process whose connections idle_ holds
};

}  // namespace cudacore::detail
