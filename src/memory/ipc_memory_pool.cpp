#include "memory/ipc_memory_pool.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "memory/owned_pool.hpp"
#include "runtime/runtime_handles.hpp"

#include <random>

namespace cudacore::detail {

CUmemoryPool create_ipc_pool(const Device& device, std::size_t max_size,
                             std::array<unsigned char, 16>& id) {
    const std::string object = "IPC memory pool of device " + std::to_string(device.ordinal());
    if (!device.attribute(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED))
        throw DriverError(CUDA_ERROR_NOT_SUPPORTED, "cuDeviceGetAttribute",
                          object + ": the device has no memory pools");
    const int handle_types = device.attribute(CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES);
    if (!(handle_types & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
        throw DriverError(CUDA_ERROR_NOT_SUPPORTED, "cuDeviceGetAttribute",
                          object + ": the device's pools cannot be shared through POSIX file "
                                   "descriptors (mempool_supported_handle_types = " +
                              std::to_string(handle_types) + ")");
    CUmemLocation location{};
    location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    location.id = device.ordinal();
    CUmemoryPool pool = create_pool(location, max_size, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                                    object + " (max size " + std::to_string(max_size) + " bytes)");
    random_pool_id(id);
    return pool;
}

void random_pool_id(std::array<unsigned char, 16>& id) {
    std::random_device random;
    for (std::size_t i = 0; i < id.size(); i += 4) {
        const unsigned value = random();
        for (std::size_t j = 0; j < 4; ++j) id[i + j] = static_cast<unsigned char>(value >> (8 * j));
    }
}

void destroy_pool(CUmemoryPool pool) noexcept {
    const DriverApi* api = driver_if_loaded();
    if (api && pool) api->cuMemPoolDestroy(pool);
}

}  // namespace cudacore::detail
