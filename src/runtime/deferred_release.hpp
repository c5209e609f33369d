// Releases that must wait until the work queued in some contexts is done: a library whose kernels
// may still run, what an executable graph held while its launches run. One background thread
// waits for those contexts (cuCtxSynchronize, never while a capture begun through cudacore is in
// progress, see capture_registry.hpp) and then releases, so that no destructor blocks (a running
// kernel may wait for the very thread that dropped the last handle).
//
// Exit ordering: start_deferred_releases() runs on normal paths (the first launch of a library or
// an executable graph), never from a destructor that may run inside exit(). It registers an
// atexit handler that refuses new work and waits for a release in progress, so exit() never
// shuts the driver down under cuCtxSynchronize or an unload; what is still queued then is left
// to the driver, which frees everything at exit. After the handler the thread touches nothing.
#pragma once

#include "runtime/runtime_handles.hpp"

#include <functional>
#include <memory>
#include <vector>

namespace cudacore::detail {

// Starts the worker thread if it is not running (and exit has not begun).
void start_deferred_releases();

// Queues `release` to run on the worker once every context in `contexts` is idle, with
// idle = true. It runs with idle = false instead (at once, on the calling thread, when it cannot
// be queued: the worker never started or exit has begun; or on the worker, when exit began during
// the wait): then it must free nothing the GPU may still use and leave it to the driver.
void defer_release(std::vector<std::shared_ptr<ContextBox>> contexts,
                   std::function<void(bool idle)> release) noexcept;

// Test hook: blocks until every release queued so far (and those they queue) is done.
void wait_for_deferred_releases();

}  // namespace cudacore::detail
