// Freeing memory that is not stream-ordered (pinned, managed): the work already queued on the
// buffer's stream may still use it, so that stream is waited for first.
#pragma once

#include "runtime/runtime_handles.hpp"
#include "runtime/release/release.hpp"

#include <string>

namespace cudacore::detail {

// Waits for `stream`, then calls free() (a driver call returning CUresult, named `free_call`).
// Does nothing without a driver, or when someone reset the device: the memory and the stream
// went with the context. Throws DriverError naming describe() (called only on failure).
template <typename Free, typename Describe>
void free_after_stream(const ContextBox& context, CUstream stream, const char* free_call,
                       Free&& free, Describe&& describe) {
    const DriverApi* api = driver_for_release(context);
    if (!api) return;
    ContextScope scope(context);
    check(api->cuStreamSynchronize(stream), "cuStreamSynchronize", describe);
    check(free(*api), free_call, describe);
}

}  // namespace cudacore::detail
