// DeviceMemoryResource's own pools (create_owned_pool), made with the helpers that every owned
// pool uses (owned_pool.hpp), and the MemoryPool view of a resource's pool.
#include "cudacore/device_memory_resource.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/memory_pool.hpp"
#include "memory/make_resource.hpp"
#include "memory/ipc_memory_pool.hpp"
#include "memory/memory_option_checks.hpp"
#include "memory/owned_pool.hpp"
#include "runtime/runtime_handles.hpp"

#include <memory>
#include <string>

namespace cudacore {

DeviceMemoryResource::DeviceMemoryResource(OwnedPoolTag, const Device& device,
                                           const DeviceMemoryPoolOptions& options)
    : BuiltinMemoryResource(device.ordinal()),
      context_(detail::primary_context(device.ordinal())) {
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
    free_streams_ = detail::make_free_streams();
    try {
        if (options.release_threshold) set_release_threshold(*options.release_threshold);
    } catch (...) {
        detail::destroy_pool(pool_);
        throw;
    }
}

std::shared_ptr<DeviceMemoryResource> DeviceMemoryResource::create_owned_pool(
    const Device& device, const DeviceMemoryPoolOptions& options) {
    return detail::make_resource<DeviceMemoryResource>(OwnedPoolTag{}, device, options);
}

MemoryPool DeviceMemoryResource::memory_pool() const {
    // Hold the resource when it is shared-owned (an owned pool lives as long as it does).
    return MemoryPool(pool_, description(), weak_from_this().lock());
}

}  // namespace cudacore
