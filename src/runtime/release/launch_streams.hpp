// The streams that work needing an object was launched on (a library's kernels, an executable
// graph), so that the object is released only once those streams are done (release.hpp)
// without synchronizing the whole context: that would invalidate every capture in progress in it,
// one begun outside cudacore too.
//
// The streams seen are held (their boxes, so a stream destroyed with work still queued keeps its
// handle for the wait) until take(). A stream seen before costs a few relaxed loads: note() runs
// on every launch. Beyond kSlots streams, further new ones take a mutex.
//
// So that an object launched on a new stream per request does not hold them all until its own
// release, the streams beyond the slots are pruned whenever their count doubles: a stream held
// only here (no wrapper left, so nothing can queue more work on it), owned by cudacore, whose
// work is done (cuStreamQuery) is let go; its release then waits for nothing of ours. The slots'
// streams are never pruned: note() compares their addresses without the lock, and a box freed
// there could come back at the same address as another stream (ABA).
#pragma once

#include "runtime/runtime_handles.hpp"

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

namespace cudacore::detail {

class LaunchStreams {
public:
    // User-provided: not zeroed first by make_shared. Every member is initialised but slots_,
    // of which only those below filled_ are ever read.
    LaunchStreams() {}

    void note(const std::shared_ptr<StreamBox>& stream) {
        const StreamBox* wanted = stream.get();
        const unsigned filled = filled_.load(std::memory_order_acquire);
        for (unsigned i = 0; i < filled; ++i) {
            if (std::atomic_ref(slots_[i]).load(std::memory_order_relaxed) == wanted) [[likely]]
                return;
        }
        note_slow(stream);
    }

    // Whether any launch was noted.
    bool any() const noexcept { return filled_.load(std::memory_order_relaxed) != 0; }

    // The streams noted so far; later notes start afresh.
    std::vector<std::shared_ptr<StreamBox>> take();
    // The streams noted so far, which stay noted.
    std::vector<std::shared_ptr<StreamBox>> noted() const;

private:
    static constexpr std::size_t kSlots = 16;
    static constexpr std::size_t kFirstPrune = 64;
    void note_slow(const std::shared_ptr<StreamBox>& stream);
    // Moves the prunable streams beyond the slots into `done` (destroyed by the caller, outside
    // the lock). Called under mutex_.
    void prune(std::vector<std::shared_ptr<StreamBox>>& done);

    // Slots below filled_ hold streams seen; the others are not even initialised (so a new
    // object costs no pass over them). Written under mutex_ before filled_ counts them.
    const StreamBox* slots_[kSlots];
    std::atomic<unsigned> filled_{0};
    mutable std::mutex mutex_;
    std::vector<std::shared_ptr<StreamBox>> streams_;  // owners of the slots (and beyond)
    std::size_t prune_at_ = kFirstPrune;               // streams_ size of the next prune
};

}  // namespace cudacore::detail
