// What a graph being captured must keep alive, and how enqueue paths find it.
//
// A GraphBuilder registers each stream it captures on (its own and those it split into) with
// the GraphHoldings of the graph being built. launch() asks captures_active() first (one relaxed
// load, so launches outside any capture pay nothing more) and, during a capture, adds the
// kernel's library to the holdings of the capture its stream belongs to, found by stream or,
// for a stream that joined the capture through an event, by the driver's capture id.
#pragma once

#include "loader/driver_api.hpp"
#include "runtime/runtime_handles.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace cudacore::detail {

// Objects a graph's nodes need (libraries, owned buffers, events, host callables), held by the
// graph and every executable graph made from it. Thread-safe.
struct GraphHoldings {
    GraphHoldings() {}  // user-provided: not zeroed first by make_shared (every member is initialised)
    // Adds `object` unless it is already held.
    void add(std::shared_ptr<const void> object);
    // Adds everything `other` holds (a child graph's holdings).
    void add_all(const GraphHoldings& other);
    std::size_t size() const;

private:
    mutable std::mutex mutex_;  // held for a comparison or two and a move
    // The first object apart: most graphs hold one library, and a capture then allocates nothing
    // more for it.
    std::shared_ptr<const void> first_;
    std::vector<std::shared_ptr<const void>> more_;
};

extern std::atomic<int> active_capture_streams;

// True while any stream of this process is registered as capturing.
inline bool captures_active() noexcept {
    return active_capture_streams.load(std::memory_order_relaxed) != 0;
}

// cuCtxSynchronize implicates every stream of its context, capturing ones too, and so
// invalidates their captures whatever their mode. The deferred-release worker, which waits for a
// context before releasing (library unloads, graph holdings; release.hpp), synchronizes
// it only through synchronize_outside_captures(): with the context current, it waits until no
// capture begun through cudacore is in progress, then synchronizes; captures register (before
// they begin: register_capture_stream) only while no such synchronize runs. False when
// `give_up` said to stop waiting (the process is exiting): nothing was synchronized. Never
// throws.
bool synchronize_outside_captures(const DriverApi& api, bool (*give_up)(void*),
                                  void* give_up_argument) noexcept;

// Runs `action` (exceptions swallowed) once no capture begun through cudacore is in progress, and
// with none beginning until it returns: for what the driver does context-wide and so would
// invalidate a capture (unloading a library synchronizes the context). False, without running
// it, when `give_up` said to stop waiting. Never throws.
bool run_outside_captures(const std::function<void()>& action, bool (*give_up)(void*),
                          void* give_up_argument) noexcept;

// Waits, with the stream's context current, until `stream` has finished the work queued on it,
// outside captures: while it is capturing (a capture begun anywhere), or a capture begun through
// cudacore is in progress, it is left alone and asked again every millisecond; captures begun
// through cudacore do not begin during the wait.
// The default streams (legacy, per-thread) implicate others: for them the context is waited for
// through synchronize_outside_captures. False when `give_up` said to stop waiting. Never throws.
bool wait_for_stream_outside_captures(const DriverApi& api, CUstream stream,
                                      bool (*give_up)(void*), void* give_up_argument) noexcept;

// `capture_id` 0: unknown yet (asked of the driver when a lookup needs it). The registry points
// at `holdings` without holding it: the caller keeps it alive until it unregisters `stream`.
// Waits while an action of the functions above runs: a builder registers its stream before
// cuStreamBeginCapture, so that no such action can run between the two (one lock, where a
// separate handshake would cost a capture two more atomic operations).
// False, changing nothing, when `stream` is registered already (another capture is on it).
bool register_capture_stream(CUstream stream, std::uint64_t capture_id, GraphHoldings& holdings);
void unregister_capture_stream(CUstream stream) noexcept;

// True when this thread added `object` to the capture of `stream` last, and no stream was
// registered or unregistered since: holding it again would change nothing.
bool held_last_for_capture(CUstream stream, const void* object) noexcept;
// Adds `object` to the holdings of the capture `stream` takes part in, if any (no repeat check:
// see hold_for_capture). Never throws.
void hold_for_capture_now(CUstream stream, std::shared_ptr<const void> object) noexcept;

// Adds `object` to the holdings of the capture `stream` takes part in, if any. A repeat (a
// capture launching one kernel many times) copies no shared_ptr, so it costs no atomic reference
// count. Never throws.
template <class T>
void hold_for_capture(CUstream stream, const std::shared_ptr<T>& object) noexcept {
    if (held_last_for_capture(stream, object.get())) return;
    hold_for_capture_now(stream, std::shared_ptr<const void>(object));
}

}  // namespace cudacore::detail
