#include "cudacore/memory_resource.hpp"

#include "memory/buffer_box.hpp"
#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/stream.hpp"
#include "support/box_access.hpp"
#include "errors/closed_object.hpp"

#include <mutex>
#include <vector>

namespace cudacore {

void keep_until_exit(const std::shared_ptr<MemoryResource>& resource) {
    if (!resource) throw InvalidArgumentError("keep_until_exit: no resource (a null std::shared_ptr)");
    // Never destroyed, so that what it holds stays alive until the process is gone.
    struct Kept {
        std::mutex mutex;
        std::vector<std::shared_ptr<MemoryResource>> resources;
    };
    static auto* kept = new Kept;
    std::lock_guard lock(kept->mutex);
    if (resource->for_the_process_.load(std::memory_order_acquire)) return;
    kept->resources.push_back(resource);
    resource->keep_for_the_process();
}

namespace {
// shared_from_this() without the exception: weak_from_this().lock() would copy the weak
// reference first, two more atomic operations per buffer.
std::shared_ptr<MemoryResource> owning_reference(MemoryResource& resource) {
    try {
        return resource.shared_from_this();
    } catch (const std::bad_weak_ptr&) {
        throw InvalidArgumentError("MemoryResource::allocate: " + resource.description() +
                                   " is not owned by a std::shared_ptr (create it with "
                                   "std::make_shared), so its buffers could not hold it");
    }
}

// description_bits_: bit 0 set once asked, bit 1 device-accessible, bit 2 host-accessible, the
// device ordinal plus one above (-1, no device, is 0).
constexpr std::uint32_t kAsked = 1, kDeviceAccessible = 2, kHostAccessible = 4;
constexpr int kOrdinalShift = 3;
}  // namespace

std::uint32_t MemoryResource::described() const noexcept {
    std::uint32_t bits = description_bits_.load(std::memory_order_relaxed);
    if (bits) [[likely]] return bits;
    bits = kAsked | (is_device_accessible() ? kDeviceAccessible : 0) |
           (is_host_accessible() ? kHostAccessible : 0) |
           (static_cast<std::uint32_t>(device_ordinal() + 1) << kOrdinalShift);
    description_bits_.store(bits, std::memory_order_relaxed);  // the same from every thread
    return bits;
}

Buffer MemoryResource::allocate(std::size_t size, const Stream& stream) {
    stream.check_open("MemoryResource::allocate");
    if (closed_.load(std::memory_order_acquire)) [[unlikely]]
        throw_closed("MemoryResource::allocate");
    // A resource kept for the whole process is pointed at without a reference count (an aliasing
    // shared_ptr with no owner): two atomic operations fewer per buffer.
    std::shared_ptr<MemoryResource> self =
        for_the_process_.load(std::memory_order_acquire)
            ? std::shared_ptr<MemoryResource>(std::shared_ptr<void>(), this)
                         : owning_reference(*this);
    // The box first: if the allocation throws it goes away holding nothing to free.
    detail::BufferBoxPtr box;
    box->size = size;
    const std::uint32_t described_as = described();
    box->device_ordinal = static_cast<int>(described_as >> kOrdinalShift) - 1;
    box->device_accessible = described_as & kDeviceAccessible;
    box->host_accessible = described_as & kHostAccessible;
    box->resource = std::move(self);
    if (size == 0) return detail::make_buffer(box);  // empty, as in cuda.core: nothing to free
    box->free_stream = detail::box_of(stream);
    box->handle = do_allocate(size, box->free_stream ? box->free_stream->handle : nullptr);
    box->track();
    return detail::make_buffer(box);
}

void MemoryResource::deallocate(CUdeviceptr pointer, std::size_t size, const Stream& stream) {
    do_deallocate(pointer, size, stream.handle());
}

void MemoryResource::close() {
    if (device_default_)
        throw InvalidArgumentError("MemoryResource::close: " + description() +
                                   " is the device's default resource, shared by the whole process "
                                   "(Device::memory_resource, Device::allocate): drop the shared_ptr "
                                   "instead, or close a resource of your own");
    if (closed_.exchange(true, std::memory_order_acq_rel)) return;
    do_close();
}

void MemoryResource::throw_closed(const char* operation) const {
    detail::throw_closed_object(operation, description(), "MemoryResource");
}

Device MemoryResource::device() const {
    if (device_ordinal() < 0)
        throw InvalidArgumentError("MemoryResource::device: " + description() +
                                   " is bound to no device (device_ordinal() is -1)");
    return Device(device_ordinal());
}

}  // namespace cudacore
