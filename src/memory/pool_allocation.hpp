// Stream-ordered allocation from and freeing to a memory pool, shared by the pool resources
// (DeviceMemoryResource, PinnedMemoryPoolResource). The explicit-stream case is inline and
// short: an explicit stream carries its context, so nothing is pushed or asked (the hot path). A
// default stream needs its context current: that rarer case is out of line.
#pragma once

#include "runtime/runtime_handles.hpp"

#include <cstddef>

namespace cudacore::detail {

CUresult allocate_from_pool_on_default_stream(const ContextBox& context, CUmemoryPool pool,
                                              CUdeviceptr& pointer, std::size_t size,
                                              CUstream stream);
CUresult free_to_pool_on_default_stream(const DriverApi& api, const ContextBox& context,
                                        CUdeviceptr pointer, CUstream stream);

inline CUresult allocate_from_pool(const ContextBox& context, CUmemoryPool pool,
                                   CUdeviceptr& pointer, std::size_t size, CUstream stream) {
    if (is_default_stream(stream)) [[unlikely]]
        return allocate_from_pool_on_default_stream(context, pool, pointer, size, stream);
    return driver().cuMemAllocFromPoolAsync(&pointer, size, pool, stream);
}

// Frees `pointer` in stream order, unless someone reset the device: then the memory, and the
// stream, went with the context, and nothing is freed (CUDA_SUCCESS).
inline CUresult free_to_pool(const ContextBox& context, CUdeviceptr pointer, CUstream stream) {
    const DriverApi* api = driver_if_loaded();
    if (!api) [[unlikely]] return CUDA_SUCCESS;  // never loaded, so nothing was allocated
    if (!context.still_alive(*api)) [[unlikely]] return CUDA_SUCCESS;
    if (is_default_stream(stream)) [[unlikely]]
        return free_to_pool_on_default_stream(*api, context, pointer, stream);
    return api->cuMemFreeAsync(pointer, stream);
}

}  // namespace cudacore::detail
