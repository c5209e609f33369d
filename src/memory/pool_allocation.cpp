#include "memory/pool_allocation.hpp"

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

}  // namespace cudacore::detail
