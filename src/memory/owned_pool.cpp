#include "memory/owned_pool.hpp"
#include "memory/ipc_memory_pool.hpp"

#include "cudacore/device.hpp"
#include "cudacore/device_memory_resource.hpp"
#include "cudacore/errors.hpp"
#include "memory/memory_option_checks.hpp"
#include "runtime/runtime_handles.hpp"

namespace cudacore {

namespace detail {

CUmemoryPool create_pool(const CUmemLocation& location, std::size_t max_size,
                         unsigned handle_types, const std::string& object) {
    CUmemPoolProps properties{};
    properties.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    properties.handleTypes = static_cast<CUmemAllocationHandleType>(handle_types);
    properties.location = location;
    properties.maxSize = max_size;
    CUmemoryPool pool = nullptr;
    check(driver().cuMemPoolCreate(&pool, &properties), "cuMemPoolCreate", object);
    return pool;
}


}  // namespace detail

DeviceMemoryResource::DeviceMemoryResource(OwnedPoolTag, const Device& device,
                                           const DeviceMemoryPoolOptions& options)
    : context_(detail::primary_context(device.ordinal())), ordinal_(device.ordinal()) {
    const std::string name = "device " + std::to_string(ordinal_);
    if (device.attribute(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED) == 0)
        throw InvalidArgumentError("DeviceMemoryResource::create_owned_pool: " + name +
                                   " does not support memory pools "
                                   "(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED is 0; use "
                                   "SynchronousMemoryResource)");
    detail::check_pool_handle_types(
        options.handle_types, [&](CUdevice_attribute attribute) { return device.attribute(attribute); },
        name);
    CUmemLocation location{};
    location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    location.id = device.handle();
    max_size_ = options.max_size;
    pool_ = detail::create_pool(location, options.max_size, options.handle_types,
                                "owned memory pool of " + name + " (max_size " +
                                    std::to_string(options.max_size) + ", handle types " +
                                    detail::handle_type_names(options.handle_types) + ")");
    owns_pool_ = true;  // from here the destructor destroys it
    try {
        if (options.release_threshold) set_release_threshold(*options.release_threshold);
    } catch (...) {
        detail::destroy_pool(pool_);
        throw;
    }
}

std::shared_ptr<DeviceMemoryResource> DeviceMemoryResource::create_owned_pool(
    const Device& device, const DeviceMemoryPoolOptions& options) {
    return std::make_shared<DeviceMemoryResource>(OwnedPoolTag{}, device, options);
}

MemoryPool DeviceMemoryResource::memory_pool() const {
    // Hold the resource when it is shared-owned (an owned pool lives as long as it does).
    return MemoryPool(pool_, description(), weak_from_this().lock());
}

}  // namespace cudacore
