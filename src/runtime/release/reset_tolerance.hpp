// Reset tolerance: the one rule for releasing driver objects whose driver state may be gone.
//
// cudacore objects may outlive what their handles live in. At exit the driver shuts down while
// static objects still hold handles; and anyone may reset a device (cuDevicePrimaryCtxReset)
// under live objects, which destroys its primary context and every stream, event, pool and
// allocation in it. A release must then do nothing: the handles went with their context, and
// destroying one again could destroy a new object to which the driver gave the same value. Nor
// is that an error worth a warning: it is how those objects end. So every release path
//   - asks driver_for_release(context) first, and releases nothing when it answers null (code
//     that has the driver already asks context_survives);
//   - reports what then fails through check_release, which keeps quiet about the statuses that
//     is_shutdown_status names;
// and a call that creates something in a primary context, and fails because someone destroyed
// that context under it, retries once on a fresh one (context_destroyed_under_us, used by
// with_primary_context).
//
// A context is known by the id the driver gave it (cuCtxGetId), noted when cudacore first holds
// it (note_context_id): the context a reset brings gets another id, so a box whose id no longer
// answers holds a context destroyed under it. Explicit operations (a launch, a copy,
// Buffer::close) ask nothing: like the driver, they trust the objects they are given.
#pragma once

#include "errors/driver_log.hpp"
#include "errors/release_report.hpp"
#include "loader/driver_api.hpp"

#include <cuda.h>

namespace cudacore::detail {

struct ContextBox;

// Notes the driver's id of `context.handle`, by which context_survives knows it later. Returns
// the driver's status (the caller decides whether a failure matters).
CUresult note_context_id(ContextBox& context, const DriverApi& api) noexcept;

// Whether `context` still holds the context cudacore noted (one cuCtxGetId): false once someone
// reset the device, or destroyed the context, under it.
bool context_survives(const ContextBox& context, const DriverApi& api) noexcept;

// The driver to release a handle of `context` with, or null when there is nothing to release:
// the driver was never loaded (so nothing was made) or is unloading at exit, or the context was
// destroyed under us.
const DriverApi* driver_for_release(const ContextBox& context) noexcept;

// Whether `status` from a call in `context` says that someone destroyed the context under it
// (CUDA_ERROR_CONTEXT_IS_DESTROYED, and the context's id no longer answers): then a fresh primary
// context may be retained and the call made again.
bool context_destroyed_under_us(CUresult status, const ContextBox& context) noexcept;

// The statuses a release meets at exit or after a device reset: the normal end of an object,
// never reported.
inline bool is_shutdown_status(CUresult status) noexcept {
    return status == CUDA_ERROR_DEINITIALIZED || status == CUDA_ERROR_NOT_INITIALIZED ||
           status == CUDA_ERROR_CONTEXT_IS_DESTROYED;
}

// Reports a release's failure as a release_failed warning unless `status` is success or a
// shutdown status; builds the object's description only then. Never throws.
template <class Describe>
inline void check_release(CUresult status, const char* call, Describe&& describe) noexcept {
    if (status == CUDA_SUCCESS) [[likely]] return;
    if (is_shutdown_status(status)) {
        discard_driver_log();  // the normal end of an object: its lines must not reach a later error
        return;
    }
    try {
        report_release_failure(status, call, describe());
    } catch (...) {
    }
}

}  // namespace cudacore::detail
