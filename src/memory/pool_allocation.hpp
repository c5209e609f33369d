// Stream-ordered allocation from and freeing to a memory pool, shared by the pool resources
// (DeviceMemoryResource, PinnedMemoryPoolResource), with their errors. The explicit-stream case
// is inline and short: an explicit stream carries its context, so nothing is pushed or asked (the
// hot path). A default stream needs its context current, and errors build their message: those
// rarer cases are out of line.
#pragma once

#include "cudacore/memory_resource.hpp"
#include "runtime/release/release.hpp"
#include "runtime/runtime_handles.hpp"

#include <cstddef>

namespace cudacore::detail {

CUresult allocate_from_pool_on_default_stream(const ContextBox& context, CUmemoryPool pool,
                                              CUdeviceptr& pointer, std::size_t size,
                                              CUstream stream);
CUresult free_to_pool_on_default_stream(const DriverApi& api, const ContextBox& context,
                                        CUdeviceptr pointer, CUstream stream);

// The driver's failure to allocate (way " bytes from ") or free (" bytes to ") `size` bytes,
// naming `resource`.
[[noreturn]] void throw_pool_error(CUresult status, const char* call, std::size_t size,
                                   const char* way, const MemoryResource& resource);
// An imported pool asked to allocate: the driver would refuse (CUDA_ERROR_INVALID_VALUE); said
// before asking it, so that misuse is no driver API error.
[[noreturn]] void refuse_imported_pool_allocation(const MemoryResource& resource, std::size_t size);

// `size` bytes from `pool` on `stream`; throws DriverError naming `resource`.
inline CUdeviceptr allocate_from_pool(const MemoryResource& resource, const ContextBox& context,
                                      CUmemoryPool pool, std::size_t size, CUstream stream) {
    CUdeviceptr pointer = 0;
    const CUresult status =
        is_default_stream(stream)
            ? allocate_from_pool_on_default_stream(context, pool, pointer, size, stream)
            : driver().cuMemAllocFromPoolAsync(&pointer, size, pool, stream);
    if (status != CUDA_SUCCESS) [[unlikely]]
        throw_pool_error(status, "cuMemAllocFromPoolAsync", size, " bytes from ", resource);
    return pointer;
}

// Frees `pointer` in stream order. With `check_context`, first asks whether someone reset the
// device: then the memory, and the stream, went with the context, and nothing is freed (a
// dropped buffer). Without it (an explicit close, free_on_request) the caller vouches
// for the memory and one driver call is saved. Throws DriverError naming `resource`.
inline void free_to_pool(const MemoryResource& resource, const ContextBox& context,
                         CUdeviceptr pointer, std::size_t size, CUstream stream,
                         bool check_context) {
    const DriverApi* api = driver_if_loaded();
    if (!api) [[unlikely]] return;  // never loaded, so nothing was allocated
    if (check_context && !context_survives(context, *api)) [[unlikely]] return;
    const CUresult status = is_default_stream(stream)
                                ? free_to_pool_on_default_stream(*api, context, pointer, stream)
                                : api->cuMemFreeAsync(pointer, stream);
    if (status != CUDA_SUCCESS) [[unlikely]]
        throw_pool_error(status, "cuMemFreeAsync", size, " bytes to ", resource);
}

// Frees memory at its owner's explicit request (Buffer::close), which vouches for the memory as
// it vouches for a buffer it fills or copies: nobody reset the device since it was allocated.
// The pool resources then skip the question a dropped buffer asks first (free_to_pool without
// check_context: one driver call saved); any other resource frees through its do_deallocate, as
// MemoryResource::deallocate_pointer does. Throws what freeing throws.
void free_on_request(MemoryResource& resource, CUdeviceptr pointer, std::size_t size,
                     CUstream stream);

}  // namespace cudacore::detail
