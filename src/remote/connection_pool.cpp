#include "remote/connection_pool.hpp"

#include <unistd.h>

#include <algorithm>

namespace cudacore::detail {

ConnectionPool::ConnectionPool(const RemoteCacheOptions& options)
    : options_(options), pid_(::getpid()) {}

ConnectionPool::Clock::time_point ConnectionPool::call_deadline() const {
    return Clock::now() + options_.connect_timeout + options_.operation_timeout;
}

std::unique_ptr<RedisConnection> ConnectionPool::acquire(bool& reused, Clock::time_point deadline) {
    {
        std::lock_guard lock(mutex_);
        if (pid_ != ::getpid()) {
            // A fork()ed child: the pooled sockets are its parent's conversations. Closing this
            // process's copies leaves the parent's connections alone.
            idle_.clear();
            pid_ = ::getpid();
        }
        if (!idle_.empty()) {
            auto connection = std::move(idle_.back());
            idle_.pop_back();
            reused = true;
            return connection;
        }
    }
    reused = false;
    try {
        auto connection = std::make_unique<RedisConnection>(
            options_, std::min(Clock::now() + options_.connect_timeout, deadline), &bytes_received);
        ++connections_opened;
        return connection;
    } catch (const RedisFailure&) {
        ++connection_failures;
        throw;
    }
}

void ConnectionPool::release(std::unique_ptr<RedisConnection> connection) {
    std::lock_guard lock(mutex_);
    if (!connection->broken() && pid_ == ::getpid() && idle_.size() < options_.max_idle_connections)
        idle_.push_back(std::move(connection));
}

void ConnectionPool::drop_idle() {
    std::vector<std::unique_ptr<RedisConnection>> dropped;
    std::lock_guard lock(mutex_);
    dropped.swap(idle_);
}

RedisReply ConnectionPool::run(const std::vector<std::string_view>& arguments,
                               std::optional<Clock::time_point> deadline) {
    const Clock::time_point until = deadline ? *deadline : call_deadline();
    for (int attempt = 0;; ++attempt) {
        bool reused = false;
        auto connection = acquire(reused, until);
        try {
            RedisReply reply = connection->command(
                arguments, std::min(Clock::now() + options_.operation_timeout, until));
            release(std::move(connection));
            return reply;
        } catch (const RedisFailure& failure) {
            if (failure.kind == RedisFailure::Kind::too_large) throw;
            if (reused && attempt == 0 && failure.kind != RedisFailure::Kind::timeout) {
                drop_idle();
                continue;
            }
            ++command_failures;
            throw;
        }
    }
}

}  // namespace cudacore::detail
