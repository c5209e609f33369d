#include "cudacore/pinned_memory_pool_resource.hpp"

#include "cudacore/device.hpp"
#include "cudacore/device_memory_resource.hpp"
#include "cudacore/errors.hpp"
#include "memory/ipc_memory_pool.hpp"
#include "memory/buffer_box.hpp"
#include "memory/owned_pool.hpp"
#include "memory/pool_allocation.hpp"

namespace cudacore {

namespace {
// Read-write access for device `ordinal` and each of `others` (each device once).
std::vector<CUmemAccessDesc> pinned_pool_access(int ordinal, const std::vector<int>& others) {
    std::vector<CUmemAccessDesc> access;
    auto grant = [&](int device) {
        for (const auto& existing : access)
            if (existing.location.id == device) return;
        CUmemAccessDesc desc{};
        desc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        desc.location.id = Device(device).handle();  // throws for an unknown device
        desc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        access.push_back(desc);
    };
    grant(ordinal);
    for (int device : others) grant(device);
    return access;
}
}  // namespace

PinnedMemoryPoolResource::PinnedMemoryPoolResource(const Device& device,
                                                   const PinnedMemoryPoolOptions& options)
    : BuiltinMemoryResource(device.ordinal()),
      context_(detail::primary_context(device.ordinal())),
      options_(options) {
    if (options_.host_numa_id && *options_.host_numa_id < 0)
        throw InvalidArgumentError("PinnedMemoryPoolResource: host_numa_id " +
                                   std::to_string(*options_.host_numa_id) + " is negative");
    numa_id_ = options_.host_numa_id;
    if (options_.ipc_enabled && !numa_id_) {
        // The driver shares host pools placed on one NUMA node only: the device's nearest.
        const int nearest = device.attribute(CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID);
        if (nearest < 0)
            throw InvalidArgumentError(
                "PinnedMemoryPoolResource: an IPC-enabled pinned pool must be placed on one host NUMA "
                "node, and device " + std::to_string(ordinal_) +
                " reports none (CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID is -1); give host_numa_id");
        numa_id_ = nearest;
    }
    // Host pools are a property of the device and driver: name the attribute that refuses.
    if (numa_id_) {
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
    const std::vector<CUmemAccessDesc> access = pinned_pool_access(ordinal_, options_.accessible_devices);

    CUmemLocation location{};
    location.type = numa_id_ ? CU_MEM_LOCATION_TYPE_HOST_NUMA : CU_MEM_LOCATION_TYPE_HOST;
    location.id = numa_id_.value_or(0);
    pool_ = detail::create_pool(
        location, options_.max_size,
        options_.ipc_enabled ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : CU_MEM_HANDLE_TYPE_NONE, description());
    if (options_.ipc_enabled) detail::random_pool_id(ipc_id_);
    free_streams_ = detail::make_free_streams();
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

PinnedMemoryPoolResource::PinnedMemoryPoolResource(const Device& device, const detail::ImportedPool& imported)
    : BuiltinMemoryResource(device.ordinal()),
      context_(detail::primary_context(device.ordinal())),
      pool_(imported.pool),
      imported_(true),
      ipc_id_(imported.id) {
    free_streams_ = detail::make_free_streams();
    // A host pool's memory is reached by devices only once they are given access, in every
    // process that maps it.
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = device.handle();
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    try {
        detail::check(detail::driver().cuMemPoolSetAccess(pool_, &access, 1), "cuMemPoolSetAccess",
                      description());
    } catch (...) {
        detail::destroy_pool(pool_);
        throw;
    }
}

PinnedMemoryPoolResource::~PinnedMemoryPoolResource() {
    // Once the frees still queued on streams have run (owned_pool.hpp). After someone reset the
    // device its pools may be gone: left alone then.
    detail::destroy_pool_after_frees(pool_, context_, free_streams_.get());
}

void PinnedMemoryPoolResource::do_close() {
    if (imported_) return;
    detail::check(detail::driver().cuMemPoolTrimTo(pool_, 0), "cuMemPoolTrimTo",
                  [&] { return description(); });
}

std::string PinnedMemoryPoolResource::description() const {
    if (imported_) return "imported IPC pinned host memory pool for device " + std::to_string(ordinal_);
    std::string out = options_.ipc_enabled ? "IPC pinned host memory pool" : "pinned host memory pool";
    if (numa_id_) out += " on host NUMA node " + std::to_string(*numa_id_);
    out += " for device " + std::to_string(ordinal_);
    if (options_.max_size) out += " (max_size " + std::to_string(options_.max_size) + " bytes)";
    return out;
}

MemoryPool PinnedMemoryPoolResource::memory_pool() const {
    return MemoryPool(pool_, description(), weak_from_this().lock());
}

CUdeviceptr PinnedMemoryPoolResource::do_allocate(std::size_t size, CUstream stream) {
    if (imported_) [[unlikely]] detail::refuse_imported_pool_allocation(*this, size);
    return detail::allocate_from_pool(*this, *context_, pool_, size, stream);
}

void PinnedMemoryPoolResource::do_deallocate(CUdeviceptr pointer, std::size_t size,
                                             CUstream stream) {
    detail::free_to_pool(*this, *context_, pointer, size, stream, true);
}

}  // namespace cudacore
