#include "cudacore/pinned_memory_pool_resource.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "memory/ipc_memory_pool.hpp"
#include "memory/buffer_box.hpp"
#include "memory/owned_pool.hpp"

namespace cudacore {

PinnedMemoryPoolResource::PinnedMemoryPoolResource(const Device& device,
                                                   const PinnedMemoryPoolOptions& options)
    : context_(detail::primary_context(device.ordinal())),
      ordinal_(device.ordinal()),
      options_(options) {
    if (options_.host_numa_id && *options_.host_numa_id < 0)
        throw InvalidArgumentError("PinnedMemoryPoolResource: host_numa_id " +
                                   std::to_string(*options_.host_numa_id) + " is negative");
    // Host pools are a property of the device and driver: name the attribute that refuses.
    if (options_.host_numa_id) {
        if (device.attribute(CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED) == 0)
            throw InvalidArgumentError(
                "PinnedMemoryPoolResource: device " + std::to_string(ordinal_) +
                " does not support host NUMA memory pools "
                "(CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED is 0)");
    } else if (device.attribute(CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED) == 0) {
        throw InvalidArgumentError("PinnedMemoryPoolResource: device " + std::to_string(ordinal_) +
                                   " does not support host memory pools "
                                   "(CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED is 0)");
    }
    std::vector<CUmemAccessDesc> access;
    auto grant = [&](int ordinal) {
        for (const auto& existing : access)
            if (existing.location.id == ordinal) return;
        CUmemAccessDesc desc{};
        desc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        desc.location.id = Device(ordinal).handle();  // throws for an unknown device
        desc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        access.push_back(desc);
    };
    grant(ordinal_);
    for (int ordinal : options_.accessible_devices) grant(ordinal);

    CUmemLocation location{};
    location.type = options_.host_numa_id ? CU_MEM_LOCATION_TYPE_HOST_NUMA : CU_MEM_LOCATION_TYPE_HOST;
    location.id = options_.host_numa_id.value_or(0);
    pool_ = detail::create_pool(location, options_.max_size, CU_MEM_HANDLE_TYPE_NONE, description());
    try {
        // A host pool is host accessible only until devices are granted access.
        detail::check(detail::driver().cuMemPoolSetAccess(pool_, access.data(), access.size()),
                      "cuMemPoolSetAccess", description());
        if (options_.release_threshold) memory_pool().set_release_threshold(*options_.release_threshold);
    } catch (...) {
        detail::destroy_pool(pool_);
        throw;
    }
}

PinnedMemoryPoolResource::~PinnedMemoryPoolResource() {
    // After someone reset the device its pools may be gone: leave them alone then.
    const detail::DriverApi* api = detail::driver_if_loaded();
    if (api && context_->still_alive(*api)) detail::destroy_pool(pool_);
}

std::string PinnedMemoryPoolResource::description() const {
    std::string out = "pinned host memory pool";
    if (options_.host_numa_id) out += " on host NUMA node " + std::to_string(*options_.host_numa_id);
    out += " for device " + std::to_string(ordinal_);
    if (options_.max_size) out += " (max_size " + std::to_string(options_.max_size) + " bytes)";
    return out;
}

MemoryPool PinnedMemoryPoolResource::memory_pool() const {
    return MemoryPool(pool_, description(), weak_from_this().lock());
}

CUdeviceptr PinnedMemoryPoolResource::do_allocate(std::size_t size, CUstream stream) {
    CUdeviceptr pointer = 0;
    CUresult status;
    if (detail::is_default_stream(stream)) {
        detail::ContextScope scope(*context_);
        status = detail::driver().cuMemAllocFromPoolAsync(&pointer, size, pool_, stream);
    } else {
        status = detail::driver().cuMemAllocFromPoolAsync(&pointer, size, pool_, stream);
    }
    if (status != CUDA_SUCCESS) [[unlikely]]
        detail::throw_driver_error(status, "cuMemAllocFromPoolAsync",
                                   std::to_string(size) + " bytes from " + description());
    return pointer;
}

void PinnedMemoryPoolResource::do_deallocate(CUdeviceptr pointer, std::size_t size,
                                             CUstream stream) {
    const detail::DriverApi* api = detail::driver_if_loaded();
    if (!api || !context_->still_alive(*api)) return;
    CUresult status;
    if (detail::is_default_stream(stream)) {
        detail::ContextScope scope(*context_);
        status = api->cuMemFreeAsync(pointer, stream);
    } else {
        status = api->cuMemFreeAsync(pointer, stream);
    }
    if (status != CUDA_SUCCESS) [[unlikely]]
        detail::throw_driver_error(status, "cuMemFreeAsync",
                                   std::to_string(size) + " bytes to " + description());
}

}  // namespace cudacore
