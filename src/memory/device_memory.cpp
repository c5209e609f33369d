// Device::memory_resource and Device::allocate (device.hpp): each device's default memory resource
// (a DeviceMemoryResource, or a SynchronousMemoryResource without memory pools), defined in the
// memory layer because it makes and uses that layer's resources.
#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/device_memory_resource.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/synchronous_memory_resource.hpp"
#include "memory/make_resource.hpp"
#include "memory/default_resource_holds.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"
#include "support/tls_address.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace cudacore {

// MemoryResource's door (the class befriends it) for the defaults made here.
struct detail::MemoryResourceAccess {
    // Lives as long as the process, and close() refuses it (the whole process shares it); set
    // before the resource is shared.
    static void make_device_default(MemoryResource& resource) noexcept {
        resource.keep_for_the_process();
        resource.device_default_ = true;
    }
};

namespace {
// One default memory resource per device, made on first use and kept; leaked on purpose so that
// buffers destroyed after main returns still find their resource. It is made again when the
// primary context it was made in is gone (someone reset the device).
// A replaced resource is kept too (never freed), so the per-thread cache below may point at it.
struct Defaults {
    std::mutex mutex;
    std::map<int, std::shared_ptr<DeviceMemoryResource>> by_ordinal;
    std::map<int, std::shared_ptr<SynchronousMemoryResource>> synchronous_by_ordinal;
    // Resources replaced after their context was forgotten stay alive: a thread's cached
    // pointer (below) may still name one until it sees the new generation.
    std::vector<std::shared_ptr<MemoryResource>> replaced;
};
Defaults& all_defaults() {
    static auto* defaults = new Defaults;
    return *defaults;
}

std::shared_ptr<MemoryResource> default_memory_resource(const Device& device) {
    Defaults* defaults = &all_defaults();
    auto context = detail::primary_context(device.ordinal());
    std::lock_guard lock(defaults->mutex);
    auto& resource = defaults->by_ordinal[device.ordinal()];
    if (resource && detail::BoxAccess::context(*resource) == context) return resource;
    auto& synchronous = defaults->synchronous_by_ordinal[device.ordinal()];
    if (synchronous && detail::BoxAccess::context(*synchronous) == context) return synchronous;
    if (resource) defaults->replaced.push_back(resource);
    if (synchronous) defaults->replaced.push_back(synchronous);
    // A device without memory pools gets cuMemAlloc / cuMemFree instead of NOT_SUPPORTED
    // (asked once per primary context, off the hot path).
    if (device.attribute(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED) == 0) {
        synchronous = detail::make_resource<SynchronousMemoryResource>(device);
        detail::MemoryResourceAccess::make_device_default(*synchronous);
        return synchronous;
    }
    resource = detail::make_resource<DeviceMemoryResource>(device);
    detail::MemoryResourceAccess::make_device_default(*resource);
    return resource;
}

// The calling thread's last default resource, so Device::allocate skips the lookup above: valid
// while the device and the primary-context generation are unchanged (a resource is replaced
// only after its context was forgotten, which changes the generation). Trivially destructible,
// so usable at any point of thread or process exit.
struct DefaultResourceCache {
    int ordinal = -1;
    std::uint64_t generation = 0;
    MemoryResource* resource = nullptr;
};
thread_local DefaultResourceCache default_resource_cache;

// The lookup when the calling thread's cache misses; apart, so that the hit stays a few
// instructions with no frame of its own.
[[gnu::noinline]] MemoryResource& refresh_default_resource(const Device& device,
                                                         std::uint64_t generation) {
    MemoryResource* resource = default_memory_resource(device).get();
    default_resource_cache = {device.ordinal(), generation, resource};
    return *resource;
}

inline MemoryResource& cached_default_resource(const Device& device) {
    DefaultResourceCache& cache = detail::tls_address(default_resource_cache);
    const std::uint64_t generation = detail::primary_context_generation();
    if (cache.resource && cache.ordinal == device.ordinal() && cache.generation == generation)
        [[likely]] return *cache.resource;
    return refresh_default_resource(device, generation);
}
}  // namespace

int detail::idle_default_resource_holds(const ContextBox& primary) {
    Defaults& defaults = all_defaults();
    std::lock_guard lock(defaults.mutex);
    int holds = 0;
    // Held by the map alone (buffers of a resource kept for the process hold no count of it).
    auto idle = [&](const auto& resource) {
        return resource && resource.use_count() == 1 &&
               detail::BoxAccess::context(*resource).get() == &primary;
    };
    if (auto found = defaults.by_ordinal.find(primary.ordinal);
        found != defaults.by_ordinal.end() && idle(found->second))
        ++holds;
    if (auto found = defaults.synchronous_by_ordinal.find(primary.ordinal);
        found != defaults.synchronous_by_ordinal.end() && idle(found->second))
        ++holds;
    return holds;
}

std::shared_ptr<MemoryResource> Device::memory_resource() const {
    return default_memory_resource(*this);
}

std::shared_ptr<DeviceMemoryResource> Device::memory_pool_resource() const {
    std::shared_ptr<MemoryResource> resource = default_memory_resource(*this);
    auto pool = std::dynamic_pointer_cast<DeviceMemoryResource>(resource);
    if (!pool)
        throw InvalidArgumentError("Device::memory_pool_resource: device " +
                                   std::to_string(ordinal()) +
                                   " has no memory pools (CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED "
                                   "0): its memory_resource() is " + resource->description());
    return pool;
}

Buffer Device::allocate(std::size_t size, const Stream& stream) const {
    return cached_default_resource(*this).allocate(size, stream);
}

}  // namespace cudacore
