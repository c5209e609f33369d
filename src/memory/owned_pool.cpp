#include "memory/owned_pool.hpp"
#include "memory/make_resource.hpp"
#include "memory/ipc_memory_pool.hpp"

#include "cudacore/device.hpp"
#include "cudacore/device_memory_resource.hpp"
#include "cudacore/errors.hpp"
#include "memory/memory_option_checks.hpp"
#include "runtime/release/release.hpp"
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

std::shared_ptr<LaunchStreams> make_free_streams() { return std::make_shared<LaunchStreams>(); }

void destroy_pool_after_frees(CUmemoryPool pool, std::shared_ptr<ContextBox> context,
                              LaunchStreams* free_streams) noexcept {
    if (!pool || !context) return;
    const DriverApi* api = driver_for_release(*context);
    if (!api) return;
    std::vector<std::shared_ptr<StreamBox>> streams;
    if (free_streams) streams = free_streams->take();
    if (streams.empty()) {
        api->cuMemPoolDestroy(pool);
        return;
    }
    defer_release(std::move(streams), [pool, context = std::move(context)](bool idle) {
        if (!idle) return;
        if (const DriverApi* api = driver_for_release(*context)) api->cuMemPoolDestroy(pool);
    });
}

}  // namespace detail

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
