// Releases that must wait until work queued on some streams is done: a library whose kernels may
// still run, what an executable graph held while its launches run. One background thread waits
// for those streams (the streams the work was launched on, launch_streams.hpp; never the whole
// context, which would invalidate any capture in progress in it) and then releases, so that no
// destructor blocks (a running kernel may wait for the very thread that dropped the last handle).
// A stream that is capturing when its turn comes is waited for once its capture is over: until
// then it runs nothing new, and a wait on it would invalidate the capture. The release itself (an
// unload synchronizes the context) runs only while no capture begun through cudacore is in
// progress; those do not begin during a wait or a release (capture_registry.hpp). A capture begun
// with the driver call itself is unknown to cudacore: an unload during it invalidates it.
//
// Exit ordering: start_deferred_releases() runs on normal paths (the first launch of a library or
// an executable graph on a stream), never from a destructor that may run inside exit(). It
// registers an atexit handler that refuses new work and waits for a release in progress, so
// exit() never shuts the driver down under a wait or an unload; what is still queued then is left
// to the driver, which frees everything at exit. After the handler the thread touches nothing.
#pragma once

#include "runtime/runtime_handles.hpp"

#include <functional>
#include <memory>
#include <vector>

namespace cudacore::detail {

// Starts the worker thread if it is not running (and exit has not begun).
void start_deferred_releases();

// Queues `release` to run on the worker once every stream in `streams` has finished what was
// queued on it, with idle = true. It runs with idle = false instead (at once, on the calling
// thread, when it cannot be queued: the worker never started or exit has begun; or on the worker,
// when exit began during the wait): then it must free nothing the GPU may still use and leave it
// to the driver.
void defer_release(std::vector<std::shared_ptr<StreamBox>> streams,
                   std::function<void(bool idle)> release) noexcept;

// Test hook: blocks until every release queued so far (and those they queue) is done.
void wait_for_deferred_releases();

}  // namespace cudacore::detail
