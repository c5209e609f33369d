// Completed events that Event boxes of one primary context gave back, kept per kind (timing
// enabled, blocking sync): the next create_event of that kind reuses one instead of asking the
// driver (on an H100, event_create 0.44x raw with this, 1.31x without). An optimisation that
// must never show: an event is kept only when it is known to have no work left (never recorded,
// or found complete by sync(), is_done() or an elapsed time after its last record;
// EventBox::reusable, decided without asking the driver). Then it behaves exactly as a new one,
// which is also complete, and a cuStreamWaitEvent enqueued on its earlier record still waits on
// that record alone. Destroyed instead: events whose completion is unknown when dropped, events
// whose handle() was taken (the caller may have recorded them behind cudacore's back),
// interprocess events (another process may hold them), events of green or non-primary contexts,
// Event::from_handle events, and events that went into a graph (recorded or waited on during a
// capture begun through cudacore, or given to Graph::add_event_record / add_event_wait), whose
// launches record them later. Bounded per kind; what is kept is destroyed with the context's box,
// before the primary context is released.
#pragma once

#include "cudacore/event.hpp"

#include <cuda.h>

#include <mutex>

namespace cudacore::detail {

class EventRecycler {
public:
    // The kind an event of `options` is kept under, or -1 when it is never kept.
    static int kind_of(const EventOptions& options) noexcept {
        if (options.ipc_enabled) return -1;
        return (options.timing_enabled ? 1 : 0) | (options.blocking_sync ? 2 : 0);
    }

    // A kept event of `kind`, or nullptr.
    CUevent take(int kind) noexcept {
        std::lock_guard lock(lock_);
        int& count = counts_[kind];
        return count ? kept_[kind][--count] : nullptr;
    }

    // Keeps `event` (complete, of `kind`); false when the kind is full.
    bool keep(CUevent event, int kind) noexcept {
        std::lock_guard lock(lock_);
        int& count = counts_[kind];
        if (count == kKept) return false;
        kept_[kind][count++] = event;
        return true;
    }

    // How many events of `kind` are kept now.
    int kept(int kind) noexcept {
        std::lock_guard lock(lock_);
        return counts_[kind];
    }

    // Hands every kept event to `destroy` and forgets them.
    template <class Destroy>
    void drain(Destroy&& destroy) noexcept {
        std::lock_guard lock(lock_);
        for (int kind = 0; kind < kKinds; ++kind) {
            for (int i = 0; i < counts_[kind]; ++i) destroy(kept_[kind][i]);
            counts_[kind] = 0;
        }
    }

private:
    static constexpr int kKinds = 4;    // timing enabled x blocking sync
    static constexpr int kKept = 128;  // per kind: a batch of events made and dropped in a loop
    std::mutex lock_;
    int counts_[kKinds] = {};
    CUevent kept_[kKinds][kKept];
};

}  // namespace cudacore::detail
