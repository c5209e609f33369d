// The checks of a pool made elsewhere (cuMemPoolCreate by another library, a device's default
// pool) that DeviceMemoryResource::from_handle makes, and the deprecated MemoryPool::from_handle,
// which forwards to it.
#include "cudacore/device.hpp"
#include "cudacore/device_memory_resource.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/memory_pool.hpp"
#include "memory/memory_pool_box.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"

#include <cstdio>
#include <string>

namespace cudacore {

namespace detail {

namespace {

std::string pool_text(CUmemoryPool pool) {
    char text[32];
    std::snprintf(text, sizeof text, "%p", static_cast<void*>(pool));
    return std::string("memory pool ") + text;
}

CUmemLocation device_location(int ordinal) {
    CUmemLocation location{};
    location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    location.id = ordinal;
    return location;
}

}  // namespace

bool is_default_pool_of(CUmemoryPool pool, int ordinal, const DriverApi& api) {
    CUdevice device = 0;
    check(api.cuDeviceGet(&device, ordinal), "cuDeviceGet", "device " + std::to_string(ordinal));
    CUmemoryPool default_pool = nullptr;
    return api.cuDeviceGetDefaultMemPool(&default_pool, device) == CUDA_SUCCESS &&
           default_pool == pool;
}

void check_pool_device(CUmemoryPool pool, int ordinal, const DriverApi& api, const char* call) {
    CUmemLocation location = device_location(ordinal);
    CUmemAccess_flags flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
    check(api.cuMemPoolGetAccess(&flags, pool, &location), "cuMemPoolGetAccess",
          [&] { return "access of device " + std::to_string(ordinal) + " to " + pool_text(pool); });
    if (flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE) return;
    throw InvalidArgumentError(std::string(call) + ": device " + std::to_string(ordinal) + " is not the device of " +
                               pool_text(pool) + " (its access to the pool is " +
                               (flags == CU_MEM_ACCESS_FLAGS_PROT_READ ? "read-only" : "none") +
                               "; a pool's own device always has read-write access)");
}

}  // namespace detail

MemoryPool MemoryPool::from_handle(CUmemoryPool pool, const Device& device,
                                   const MemoryPoolFromHandleOptions& options) {
    return DeviceMemoryResource::from_handle(pool, device, {.take_ownership = options.take_ownership})
        ->memory_pool();
}

}  // namespace cudacore
