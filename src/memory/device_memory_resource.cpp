#include "cudacore/device_memory_resource.hpp"

#include "memory/buffer_box.hpp"
#include "memory/owned_pool.hpp"
#include "memory/pool_allocation.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "memory/ipc_memory_pool.hpp"
#include "memory/make_resource.hpp"
#include "memory/memory_pool_box.hpp"

namespace cudacore {

DeviceMemoryResource::DeviceMemoryResource(const Device& device,
                                           const DeviceMemoryResourceOptions& options)
    : BuiltinMemoryResource(device.ordinal()),
      context_(detail::primary_context(device.ordinal())) {
    if (options.ipc_enabled) {
        pool_ = detail::create_ipc_pool(device, options.max_size, ipc_id_);
        owns_pool_ = true;
        ipc_pool_ = true;
        free_streams_ = detail::make_free_streams();
        if (options.release_threshold) set_release_threshold(*options.release_threshold);
        return;
    }
    detail::check(detail::driver().cuDeviceGetDefaultMemPool(&pool_, device.handle()),
                  "cuDeviceGetDefaultMemPool", "device " + std::to_string(ordinal_));
    if (options.release_threshold) set_release_threshold(*options.release_threshold);
}

DeviceMemoryResource::DeviceMemoryResource(const Device& device,
                                           const detail::ImportedPool& imported)
    : BuiltinMemoryResource(device.ordinal()),
      context_(detail::primary_context(device.ordinal())),
      pool_(imported.pool),
      imported_(true),
      ipc_id_(imported.id) {
    free_streams_ = detail::make_free_streams();
}

DeviceMemoryResource::DeviceMemoryResource(ForeignPoolTag, CUmemoryPool pool, const Device& device,
                                           bool take_ownership)
    : BuiltinMemoryResource(device.ordinal()),
      context_(detail::primary_context(device.ordinal())),
      pool_(pool),
      owns_pool_(take_ownership),
      foreign_(true) {
    if (!pool)
        throw InvalidArgumentError("DeviceMemoryResource::from_handle: null memory pool (device " +
                                   std::to_string(ordinal_) + ")");
    if (owns_pool_) free_streams_ = detail::make_free_streams();
}

std::shared_ptr<DeviceMemoryResource> DeviceMemoryResource::from_handle(
    CUmemoryPool pool, const Device& device, const DeviceMemoryResourceFromHandleOptions& options) {
    const int ordinal = device.ordinal();
    if (!pool)
        throw InvalidArgumentError("DeviceMemoryResource::from_handle: null memory pool (device " +
                                   std::to_string(ordinal) + ")");
    const detail::DriverApi& api = detail::driver();
    detail::check_pool_device(pool, ordinal, api, "DeviceMemoryResource::from_handle");
    if (options.take_ownership && detail::is_default_pool_of(pool, ordinal, api))
        throw InvalidArgumentError("DeviceMemoryResource::from_handle: cannot take ownership of the default "
                                   "memory pool of device " + std::to_string(ordinal) + " (nobody destroys it)");
    return detail::make_resource<DeviceMemoryResource>(ForeignPoolTag{}, pool, device,
                                                  options.take_ownership);
}

// The default pool belongs to the device: nothing to destroy. A pool of its own (owned, IPC or
// imported) is destroyed; the driver keeps it until its last allocation is freed. An imported
// pool is destroyed by its importer too, but only once every buffer imported from it was freed
// (the driver refuses it otherwise): those buffers hold this resource, so they go first; their
// frees may still be queued on streams, which it waits for (owned_pool.hpp). After someone reset the device the pool
// went with it: nothing to destroy.
DeviceMemoryResource::~DeviceMemoryResource() {
    if (!owns_pool_ && !imported_) return;
    detail::destroy_pool_after_frees(pool_, context_, free_streams_.get());
}

std::string DeviceMemoryResource::description() const {
    if (imported_) return "imported IPC memory pool of device " + std::to_string(ordinal_);
    if (ipc_pool_)
        return "IPC memory pool of device " + std::to_string(ordinal_);
    if (foreign_)
        return std::string(owns_pool_ ? "adopted" : "borrowed") + " memory pool of device " +
               std::to_string(ordinal_);
    if (owns_pool_)
        return "owned memory pool of device " + std::to_string(ordinal_) +
               (max_size_ ? " (max_size " + std::to_string(max_size_) + " bytes)" : "");
    return "memory pool of device " + std::to_string(ordinal_);
}

CUdeviceptr DeviceMemoryResource::do_allocate(std::size_t size, CUstream stream) {
    if (imported_) [[unlikely]] detail::refuse_imported_pool_allocation(*this, size);
    return detail::allocate_from_pool(*this, *context_, pool_, size, stream);
}

void DeviceMemoryResource::do_deallocate(CUdeviceptr pointer, std::size_t size, CUstream stream) {
    detail::free_to_pool(*this, *context_, pointer, size, stream, true);
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

void DeviceMemoryResource::do_close() {
    if (owns_pool_ && !imported_) trim_to(0);
}

void DeviceMemoryResource::trim_to(std::size_t bytes_to_keep) {
    detail::check(detail::driver().cuMemPoolTrimTo(pool_, bytes_to_keep), "cuMemPoolTrimTo",
                  std::to_string(bytes_to_keep) + " bytes kept by " + description());
}

}  // namespace cudacore
