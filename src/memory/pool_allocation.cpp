#include "memory/pool_allocation.hpp"

#include "cudacore/device_memory_resource.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/pinned_memory_pool_resource.hpp"
#include "support/box_access.hpp"

#include <string>
#include <typeinfo>

namespace cudacore::detail {

CUresult allocate_from_pool_on_default_stream(const ContextBox& context, CUmemoryPool pool,
                                              CUdeviceptr& pointer, std::size_t size,
                                              CUstream stream) {
    ContextScope scope(context);
    return driver().cuMemAllocFromPoolAsync(&pointer, size, pool, stream);
}

CUresult free_to_pool_on_default_stream(const DriverApi& api, const ContextBox& context,
                                        CUdeviceptr pointer, CUstream stream) {
    ContextScope scope(context);
    return api.cuMemFreeAsync(pointer, stream);
}

void free_on_request(MemoryResource& resource, CUdeviceptr pointer, std::size_t size,
                     CUstream stream) {
    // Both pool resources are final: their exact type says which one it is, in one comparison.
    const std::type_info& type = typeid(resource);
    if (type == typeid(DeviceMemoryResource)) [[likely]] {
        const auto& pool = static_cast<const DeviceMemoryResource&>(resource);
        free_to_pool(pool, *BoxAccess::context(pool), pointer, size, stream, false);
    } else if (type == typeid(PinnedMemoryPoolResource)) {
        const auto& pool = static_cast<const PinnedMemoryPoolResource&>(resource);
        free_to_pool(pool, *BoxAccess::context(pool), pointer, size, stream, false);
    } else {
        resource.deallocate_pointer(pointer, size, stream);
    }
}

void throw_pool_error(CUresult status, const char* call, std::size_t size, const char* way,
                      const MemoryResource& resource) {
    throw_driver_error(status, call, std::to_string(size) + way + resource.description());
}

void refuse_imported_pool_allocation(const MemoryResource& resource, std::size_t size) {
    throw InvalidArgumentError("MemoryResource::allocate: " + resource.description() +
                               " cannot allocate " + std::to_string(size) +
                               " bytes (an imported pool only imports buffers)");
}

}  // namespace cudacore::detail
