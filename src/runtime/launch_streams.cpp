#include "runtime/launch_streams.hpp"

#include "runtime/deferred_release.hpp"

#include <algorithm>
#include <utility>

namespace cudacore::detail {

void LaunchStreams::note_slow(const std::shared_ptr<StreamBox>& stream) {
    // What noted this may now need a deferred release: make sure the worker runs, started here,
    // while the process runs normally, and not later from a destructor inside exit().
    start_deferred_releases();
    std::lock_guard lock(mutex_);
    if (std::find(streams_.begin(), streams_.end(), stream) != streams_.end()) return;
    streams_.push_back(stream);
    for (auto& slot : slots_) {
        const StreamBox* expected = nullptr;
        if (slot.compare_exchange_strong(expected, stream.get(), std::memory_order_relaxed)) return;
    }
    // More streams than slots: later launches there take this (locked) path.
}

std::vector<std::shared_ptr<StreamBox>> LaunchStreams::take() {
    std::lock_guard lock(mutex_);
    for (auto& slot : slots_) slot.store(nullptr, std::memory_order_relaxed);
    return std::exchange(streams_, {});
}

std::vector<std::shared_ptr<StreamBox>> LaunchStreams::noted() const {
    std::lock_guard lock(mutex_);
    return streams_;
}

}  // namespace cudacore::detail
