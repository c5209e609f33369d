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

}  // namespace cudacore
