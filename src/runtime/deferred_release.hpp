// Releases that must wait until work queued on some streams is done: a library whose kernels may
// still run, what an executable graph held while its launches run. One background thread (the
// release thread) waits and then releases, so that no destructor blocks (a running kernel may
// wait for the very thread that dropped the last handle).
//
// What the release thread may touch. The driver runs calls on one stream or context from several
// threads at once unsafely in places (a green context has no internal synchronization at all,
// and a wait inside the driver raced with another thread's frees and destroys on the same
// streams), so the release thread makes no driver call on a stream or a context the user may be
// using meanwhile:
// - It waits without the driver. When a release is queued, on the caller's thread, a host
//   function is enqueued on each stream the work was launched on (cuLaunchHostFunc), which raises
//   a signal once the work before it is done; the release thread waits for the signals. The
//   default streams get theirs on the legacy stream (which follows every blocking stream).
// - It never touches the handle of a stream the caller owns (Stream::from_handle): the caller
//   may destroy it once its last wrapper is gone. While a wrapper lives, the release enqueues
//   its own signal; after, it takes the one the last wrapper enqueued (runtime_handles.hpp).
// - It holds no stream: the boxes of the streams stay with their owners, so a stream is
//   destroyed on a user's thread. Only a stream that was capturing when the release was queued
//   (no host function can go there then) is held, and waited for here once its capture is over.
// - The release itself (cuLibraryUnload, dropping what a graph held) runs only while no capture
//   begun through cudacore is in progress (capture_registry.hpp); those do not begin during it.
//   A capture begun with the driver call itself is unknown to cudacore: an unload during it
//   invalidates it.
//
// Exit ordering: start_deferred_releases() runs on normal paths (the first launch of a library or
// an executable graph on a stream), never from a destructor that may run inside exit(). It
// registers an atexit handler that refuses new work and waits for a release in progress (a wait
// for signals ends at once then), so exit() never shuts the driver down under a release; what is
// still queued then is left to the driver, which frees everything at exit. After the handler the
// thread touches nothing.
#pragma once

#include "runtime/runtime_handles.hpp"

#include <functional>
#include <memory>
#include <vector>

namespace cudacore::detail {

// Starts the worker thread if it is not running (and exit has not begun).
void start_deferred_releases();

// Queues `release` to run on the worker once every stream in `streams` has finished what was
// queued on it before this call, with idle = true. It runs with idle = false instead (at once, on
// the calling thread, when it cannot be queued: the worker never started or exit has begun; or
// on the worker, when exit began during the wait): then it must free nothing the GPU may still
// use and leave it to the driver. The streams' handles must be valid (their boxes held, or a
// wrapper of a caller's stream alive); the boxes are not kept.
void defer_release(std::vector<std::shared_ptr<StreamBox>> streams,
                   std::function<void(bool idle)> release) noexcept;

// A signal raised once the work queued on `stream` so far is done: a host function enqueued now
// (the caller's thread; the stream's handle must be valid). Null when none can be enqueued (the
// stream is capturing, or the driver refused); raised already when its context is gone. Never
// throws.
std::shared_ptr<StreamDone> signal_when_done(const StreamBox& stream) noexcept;

// For a stream the caller owns (Stream::from_handle) after its last Stream wrapper went, and
// work that a release will wait for was queued there since (a buffer freed there): enqueues a
// new end-of-work signal behind that work, while the caller's handle is still valid. Does nothing
// while a wrapper lives (that wrapper's end, or the release itself, enqueues one). Never throws.
void refresh_end_of_work(StreamBox& stream) noexcept;

// Replaces the end-of-work signal of a caller's stream by one enqueued now (the older one stays
// where none can be). The caller holds stream.adopted->mutex and the handle is valid. Never throws.
void renew_end_of_work(StreamBox& stream) noexcept;

// Test hook: blocks until every release queued so far (and those they queue) is done.
void wait_for_deferred_releases();

}  // namespace cudacore::detail
