#include "runtime/release/launch_streams.hpp"

#include "loader/driver_api.hpp"
#include "runtime/release/release.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

namespace cudacore::detail {

void LaunchStreams::note_slow(const std::shared_ptr<StreamBox>& stream) {
    // What noted this may now need a deferred release: make sure the worker runs, started here,
    // while the process runs normally, and not later from a destructor inside exit().
    start_deferred_releases();
    // A stream the caller owns: its last wrapper must leave an event to wait on (stream.cpp).
    if (stream->adopted) {
        std::lock_guard adopted_lock(stream->adopted->mutex);
        stream->adopted->waited_for = true;
    }
    std::vector<std::shared_ptr<StreamBox>> done;  // destroyed after the lock is let go
    std::lock_guard lock(mutex_);
    if (std::find(streams_.begin(), streams_.end(), stream) != streams_.end()) return;
    if (streams_.size() >= prune_at_) {
        prune(done);
        prune_at_ = std::max(kFirstPrune, 2 * streams_.size());
    }
    streams_.push_back(stream);
    const unsigned filled = filled_.load(std::memory_order_relaxed);
    // More streams than slots: later launches there take this (locked) path.
    if (filled == kSlots) return;
    std::atomic_ref(slots_[filled]).store(stream.get(), std::memory_order_relaxed);
    filled_.store(filled + 1, std::memory_order_release);
}

void LaunchStreams::prune(std::vector<std::shared_ptr<StreamBox>>& done) {
    const DriverApi* api = driver_if_loaded();
    if (!api) return;
    const auto first = streams_.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(kSlots, streams_.size()));
    const auto kept = std::stable_partition(first, streams_.end(), [&](const std::shared_ptr<StreamBox>& box) {
        const bool finished = box.use_count() == 1 && box->owned && !box->adopted && box->handle &&
                              api->cuStreamQuery(box->handle) == CUDA_SUCCESS;
        return !finished;
    });
    done.insert(done.end(), std::make_move_iterator(kept), std::make_move_iterator(streams_.end()));
    streams_.erase(kept, streams_.end());
}

std::vector<std::shared_ptr<StreamBox>> LaunchStreams::take() {
    std::lock_guard lock(mutex_);
    filled_.store(0, std::memory_order_relaxed);
    return std::exchange(streams_, {});
}

std::vector<std::shared_ptr<StreamBox>> LaunchStreams::noted() const {
    std::lock_guard lock(mutex_);
    return streams_;
}

}  // namespace cudacore::detail
