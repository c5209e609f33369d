// The waits of the compile path (another process's compile lease, another thread's compile of the
// same key) give up soon after the compile's CancellationToken is cancelled. The token has nothing
// to wait on, so a wait reads it every cancellation_poll.
#pragma once

#include "cudacore/cancellation.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

namespace cudacore::detail {

// How often a waiting compile reads its token: the bound on how late it sees a cancel().
inline constexpr std::chrono::milliseconds cancellation_poll{10};

// Sleeps for `duration`, in steps of cancellation_poll; returns false as soon as `cancellation`
// is cancelled (then the sleep was cut short), true when it slept the whole time.
inline bool sleep_unless_cancelled(std::chrono::steady_clock::duration duration,
                                   const CancellationToken& cancellation) {
    const auto end = std::chrono::steady_clock::now() + duration;
    for (;;) {
        if (cancellation.is_cancelled()) return false;
        const auto now = std::chrono::steady_clock::now();
        if (now >= end) return true;
        std::this_thread::sleep_for(
            std::min<std::chrono::steady_clock::duration>(cancellation_poll, end - now));
    }
}

}  // namespace cudacore::detail
