// When a RemoteProgramCache tries its server: at every call while the server works; after a
// failure, once per back-off delay (retry_after, doubled at each failed retry up to
// max_retry_after), by one caller while the others skip. Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>

namespace cudacore::detail {

class ServerBackoff {
public:
    ServerBackoff(std::chrono::milliseconds retry_after,
                  std::chrono::milliseconds max_retry_after) noexcept
        : retry_after_(retry_after),
          max_retry_after_(max_retry_after),
          delay_ms_(retry_after.count()) {}

    // Whether this call may use the server; `probing` is set for the one retrying after a back-off.
    bool may_try(bool& probing);
    // The server answered: stop backing off.
    void answered();
    // A connection-level failure: start backing off, or lengthen the back-off after a failed
    // retry (`probing`); a failure seen by another thread of the same outage changes nothing.
    void failed(bool probing);

private:
    std::chrono::milliseconds retry_after_, max_retry_after_;
    // 0 while the server works; else the steady-clock time before which nothing is tried. The
    // thread that moves it forward once it has passed is the one that retries.
    std::atomic<std::int64_t> retry_at_ns_{0};
    std::mutex mutex_;
    std::int64_t delay_ms_;  // with mutex_ held
};

}  // namespace cudacore::detail
