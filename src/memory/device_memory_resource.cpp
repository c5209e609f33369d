#include "cudacore/device_memory_resource.hpp"

#include "memory/buffer_box.hpp"
#include "memory/owned_pool.hpp"
#include "memory/pool_allocation.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "memory/ipc_memory_pool.hpp"

namespace cudacore {

DeviceMemoryResource::DeviceMemoryResource(const Device& device,
                                           const DeviceMemoryResourceOptions& options)
    : context_(detail::primary_context(device.ordinal())), ordinal_(device.ordinal()) {
    if (options.ipc_enabled) {
        pool_ = detail::create_ipc_pool(device, options.max_size, ipc_id_);
        owns_pool_ = true;
        ipc_pool_ = true;
        if (options.release_threshold) set_release_threshold(*options.release_threshold);
        return;
    }
    detail::check(detail::driver().cuDeviceGetDefaultMemPool(&pool_, device.handle()),
                  "cuDeviceGetDefaultMemPool", "device " + std::to_string(ordinal_));
    if (options.release_threshold) set_release_threshold(*options.release_threshold);
}

DeviceMemoryResource::DeviceMemoryResource(const Device& device,
                                           const detail::ImportedPool& imported)
    : context_(detail::primary_context(device.ordinal())),
      pool_(imported.pool),
      ordinal_(device.ordinal()),
      imported_(true),
      ipc_id_(imported.id) {}

// The default pool belongs to the device: nothing to destroy. A pool of its own (owned, IPC or
// imported) is destroyed; the driver keeps it until its last allocation is freed. An imported
// pool is destroyed by its importer too, but only once every buffer imported from it was freed
// (the driver refuses it otherwise): those buffers hold this resource, so they go first. After
// someone reset the device the pool went with it: nothing to destroy.
DeviceMemoryResource::~DeviceMemoryResource() {
    if (!owns_pool_ && !imported_) return;
    const detail::DriverApi* api = detail::driver_if_loaded();
    if (api && context_->still_alive(*api)) detail::destroy_pool(pool_);
}

std::string DeviceMemoryResource::description() const {
    if (imported_) return "imported IPC memory pool of device " + std::to_string(ordinal_);
    if (ipc_pool_)
        return "IPC memory pool of device " + std::to_string(ordinal_);
    if (owns_pool_)
        return "owned memory pool of device " + std::to_string(ordinal_) +
               (max_size_ ? " (max_size " + std::to_string(max_size_) + " bytes)" : "");
    return "memory pool of device " + std::to_string(ordinal_);
}

[[gnu::noinline]] void DeviceMemoryResource::throw_pool_error(CUresult status, const char* call,
                                                              std::size_t size, const char* way) const {
    // An imported pool refuses allocations (CUDA_ERROR_INVALID_VALUE): said before asking the
    // driver, so that misuse is no driver API error.
    if (!call)
        throw InvalidArgumentError("MemoryResource::allocate: " + description() + " cannot allocate " +
                                   std::to_string(size) +
                                   " bytes (an imported pool only imports buffers)");
    detail::throw_driver_error(status, call, std::to_string(size) + way + description());
}

CUdeviceptr DeviceMemoryResource::do_allocate(std::size_t size, CUstream stream) {
    if (imported_) [[unlikely]] throw_pool_error(CUDA_SUCCESS, nullptr, size, nullptr);
    CUdeviceptr pointer = 0;
    const CUresult status = detail::allocate_from_pool(*context_, pool_, pointer, size, stream);
    if (status != CUDA_SUCCESS) [[unlikely]]
        throw_pool_error(status, "cuMemAllocFromPoolAsync", size, " bytes from ");
    return pointer;
}

void DeviceMemoryResource::do_deallocate(CUdeviceptr pointer, std::size_t size, CUstream stream) {
    const CUresult status = detail::free_to_pool(*context_, pointer, stream);
    if (status != CUDA_SUCCESS) [[unlikely]]
        throw_pool_error(status, "cuMemFreeAsync", size, " bytes to ");
}

void DeviceMemoryResource::set_release_threshold(std::uint64_t bytes) {
    cuuint64_t value = bytes;
    detail::check(detail::driver().cuMemPoolSetAttribute(pool_, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                                                         &value),
                  "cuMemPoolSetAttribute",
                  "release threshold " + std::to_string(bytes) + " of " + description());
}

std::uint64_t DeviceMemoryResource::pool_attribute(CUmemPool_attribute attribute,
                                                   const char* name) const {
    cuuint64_t value = 0;
    detail::check(detail::driver().cuMemPoolGetAttribute(pool_, attribute, &value),
                  "cuMemPoolGetAttribute", [&] { return std::string(name) + " of " + description(); });
    return value;
}

std::uint64_t DeviceMemoryResource::release_threshold() const {
    return pool_attribute(CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, "release threshold");
}

std::uint64_t DeviceMemoryResource::used_memory() const {
    return pool_attribute(CU_MEMPOOL_ATTR_USED_MEM_CURRENT, "used memory");
}

std::uint64_t DeviceMemoryResource::reserved_memory() const {
    return pool_attribute(CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, "reserved memory");
}

void DeviceMemoryResource::trim_to(std::size_t bytes_to_keep) {
    detail::check(detail::driver().cuMemPoolTrimTo(pool_, bytes_to_keep), "cuMemPoolTrimTo",
                  std::to_string(bytes_to_keep) + " bytes kept by " + description());
}

}  // namespace cudacore
