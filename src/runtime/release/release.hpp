// Keep it until the GPU is done: the one internal API for releasing what work queued on streams
// may still use (a library whose kernels may run, what an executable graph or a capture holds, a
// pool whose frees are queued, a CUDA array being copied, a texture read by a kernel), and for
// releasing at exit before the driver goes. Buffers, arrays, textures, surfaces, graphs, pools
// and launches use this header alone; the parts it is made of sit beside it in this folder:
// - launch_streams.hpp: LaunchStreams, the streams work using an object was launched on (noted on
//   every launch, a few relaxed loads);
// - deferred_release.cpp: the release thread, which waits for those streams without blocking the
//   thread that dropped the last handle;
// - release_after_uses.cpp: a driver object destroyed at once or after its uses;
// - capture_registry.hpp: what a graph being captured must keep alive, and no release during a
//   capture;
// - reset_tolerance.hpp: the rule every release follows when the driver or the context is gone;
// - event_recycler.hpp: completed events kept for the next create_event instead of destroyed.
// docs/design/release.md describes the whole.
#pragma once

#include "loader/driver_api.hpp"
#include "runtime/release/capture_registry.hpp"
#include "runtime/release/launch_streams.hpp"
#include "runtime/release/reset_tolerance.hpp"
#include "runtime/runtime_handles.hpp"

#include <functional>
#include <memory>
#include <vector>

namespace cudacore::detail {

// ---- Hold this until the work on these streams is done ----

// Starts the release thread if it is not running (and exit has not begun). Called on normal
// paths (the first launch of a library or an executable graph on a stream, an array's first
// copy), never from a destructor that may run inside exit().
void start_deferred_releases();

// Runs destroy(api) (the driver's destroy call, whose failure it reports itself) and then drops
// `held` (what the object kept alive): now, when no capture begun through cudacore is in progress
// and `uses` noted no stream or the noted streams are done already (streams_done: the user
// synchronized before letting go, and a process that exits next leaks nothing); otherwise on the release thread once the noted streams are
// done. Nothing is destroyed without a driver or once `context` is gone (a device reset took the
// object with it); a null `context` is an object of no context (a library: destroyed while the
// driver is loaded). At exit (a release that cannot wait) `held` is leaked and nothing destroyed:
// the driver frees it all. `destroy` may be empty (a view that owns no handle). Never throws.
// Arrays, textures, surfaces and libraries (the kernels launched from them).
void release_after_uses(LaunchStreams& uses, const std::shared_ptr<ContextBox>& context,
                        std::function<void(const DriverApi&)> destroy,
                        std::shared_ptr<void> held) noexcept;

// Keeps `holdings` until the streams in `streams` have finished their work, then drops them on
// the release thread (a destructor never blocks). At exit they are leaked: the driver frees
// everything. Never throws. What an executable graph held (its graph's holdings, node
// parameters replaced since).
void hold_until_done(std::vector<std::shared_ptr<StreamBox>> streams,
                     std::vector<std::shared_ptr<const void>> holdings) noexcept;

// Queues `release` to run on the release thread once every stream in `streams` has finished what
// was queued on it before this call, with idle = true. It runs with idle = false instead (at
// once, on the calling thread, when it cannot be queued: the thread never started or exit has
// begun; or on the thread, when exit began during the wait): then it must free nothing the GPU
// may still use and leave it to the driver. The streams' handles must be valid (their boxes
// held, or a wrapper of a caller's stream alive); the boxes are not kept.
void defer_release(std::vector<std::shared_ptr<StreamBox>> streams,
                   std::function<void(bool idle)> release) noexcept;

// Whether the work queued so far on every stream in `streams` is done, asked now on the calling
// thread (cuStreamQuery; a stream that is capturing is not done). False for a default stream or a
// caller's stream (Stream::from_handle), whose queries could not say so safely: those wait for
// their signals. Never throws.
bool streams_done(const std::vector<std::shared_ptr<StreamBox>>& streams) noexcept;

// ---- Release at exit before the driver goes ----

// Registers `release` to run at process exit before the driver's own teardown (exit handlers
// run in reverse order of registration, and the driver registered its own when it was
// initialised): the caller has loaded the driver. `release` must not throw.
void release_at_exit(void (*release)()) noexcept;

// ---- Streams the caller owns (Stream::from_handle) ----

// A signal raised once the work queued on `stream` so far is done: a host function enqueued now
// (the caller's thread; the stream's handle must be valid). Null when none can be enqueued (the
// stream is capturing, or the driver refused); raised already when its context is gone. Never
// throws.
std::shared_ptr<StreamDone> signal_when_done(const StreamBox& stream) noexcept;

// For a stream the caller owns after its last Stream wrapper went, and work that a release will
// wait for was queued there since (a buffer freed there): enqueues a new end-of-work signal
// behind that work, while the caller's handle is still valid. Does nothing while a wrapper lives
// (that wrapper's end, or the release itself, enqueues one). Never throws.
void refresh_end_of_work(StreamBox& stream) noexcept;

// Replaces the end-of-work signal of a caller's stream by one enqueued now (the older one stays
// where none can be). The caller holds stream.adopted->mutex and the handle is valid. Never throws.
void renew_end_of_work(StreamBox& stream) noexcept;

// Test hook: blocks until every release queued so far (and those they queue) is done.
void wait_for_deferred_releases();

}  // namespace cudacore::detail
