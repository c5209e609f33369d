#include "runtime/release/reset_tolerance.hpp"

#include "runtime/runtime_handles.hpp"

namespace cudacore::detail {

CUresult note_context_id(ContextBox& context, const DriverApi& api) noexcept {
    return api.cuCtxGetId(context.handle, &context.id);
}

bool context_survives(const ContextBox& context, const DriverApi& api) noexcept {
    unsigned long long now = 0;
    return api.cuCtxGetId(context.handle, &now) == CUDA_SUCCESS && now == context.id;
}

const DriverApi* driver_for_release(const ContextBox& context) noexcept {
    const DriverApi* api = driver_if_loaded();
    return api && context_survives(context, *api) ? api : nullptr;
}

bool context_destroyed_under_us(CUresult status, const ContextBox& context) noexcept {
    if (status != CUDA_ERROR_CONTEXT_IS_DESTROYED) return false;
    const DriverApi* api = driver_if_loaded();
    return api && !context_survives(context, *api);
}

}  // namespace cudacore::detail
