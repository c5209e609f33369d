#include "cudacore/buffer.hpp"

#include "memory/buffer_box.hpp"
#include "errors/release_report.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/stream.hpp"
#include "support/box_access.hpp"
#include "support/spin_lock.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <type_traits>
#include <vector>

namespace cudacore {

namespace detail {

constinit LiveBuffers live_buffer_list;

namespace {

void unlink(LiveBuffers& live, BufferBox& box) noexcept {
    if (box.previous) box.previous->next = box.next;
    else live.head = box.next;
    if (box.next) box.next->previous = box.previous;
    box.previous = box.next = nullptr;
    box.tracked.store(false, std::memory_order_relaxed);
}

}  // namespace

// What a box frees, taken out of it (under the list's mutex when tracked) so that freeing happens
// once, outside the lock.
struct BufferRelease {
    CUdeviceptr pointer = 0;
    std::size_t size = 0;
    std::shared_ptr<MemoryResource> resource;  // set when the resource frees the memory
    std::shared_ptr<StreamBox> free_stream;
    std::shared_ptr<void> owner;
    Buffer::Deleter deleter;
};

namespace {

BufferRelease take(BufferBox& box) noexcept {
    BufferRelease out;
    out.pointer = box.handle;
    out.size = box.size;
    if (box.owned && box.handle) out.resource = std::move(box.resource);
    box.resource.reset();
    out.free_stream = std::move(box.free_stream);
    if (box.foreign) [[unlikely]] {
        out.owner = std::move(box.foreign->owner);
        out.deleter = std::move(box.foreign->deleter);
        box.foreign.reset();
    }
    box.handle = 0;
    box.closed = true;
    return out;
}

BufferRelease take_tracked(BufferBox& box) noexcept {
    if (!box.tracked.load(std::memory_order_relaxed)) return take(box);
    LiveBuffers& live = live_buffer_list;
    std::lock_guard lock(live.mutex);
    // The exit handler may have taken it (and unlinked it) in the meantime.
    if (box.tracked.load(std::memory_order_relaxed)) unlink(live, box);
    return take(box);
}

void release_live_buffers() noexcept {
    std::vector<BufferRelease> releases;
    {
        LiveBuffers& live = live_buffer_list;
        std::lock_guard lock(live.mutex);
        try {
            for (BufferBox* box = live.head; box; box = box->next) releases.emplace_back();
        } catch (...) {
            return;  // out of memory at exit: leave it to the driver
        }
        std::size_t index = 0;
        while (BufferBox* box = live.head) {
            unlink(live, *box);
            releases[index++] = take(*box);
        }
    }
    for (BufferRelease& release : releases) {
        try {
            BufferBox::free(release, release.free_stream ? release.free_stream->handle : nullptr);
        } catch (const DriverError& e) {
            // As in the destructor: shutdown statuses are silent, anything else is reported.
            report_release_failure(e.status(), e.call().c_str(),
                                   !e.object().empty() || !release.resource
                                       ? e.object()
                                       : release.resource->description());
        } catch (...) {
            // Ignored, as in a destructor.
        }
    }
}

}  // namespace

void arm_exit_release(LiveBuffers& live) noexcept {
    if (live.armed.exchange(true)) return;
    std::atexit(release_live_buffers);
}

void BufferBox::free(BufferRelease& release, CUstream stream) {
    // Each step runs even when an earlier one throws; the first error is rethrown.
    std::exception_ptr error;
    if (release.resource && release.pointer) {
        try {
            release.resource->do_deallocate(release.pointer, release.size, stream);
        } catch (...) {
            error = std::current_exception();
        }
    }
    if (release.deleter) {
        try {
            release.deleter(release.pointer, release.size);
        } catch (...) {
            if (!error) error = std::current_exception();
        }
    }
    release.owner.reset();
    if (error) std::rethrow_exception(error);
}

BufferBox::~BufferBox() {
    if (!tracked.load(std::memory_order_relaxed)) return;  // nothing to free, or already freed (close(), exit handler)
    BufferRelease release = take_tracked(*this);
    try {
        free(release, release.free_stream ? release.free_stream->handle : nullptr);
    } catch (const DriverError& e) {
        // Shutdown statuses are the normal end of a process; anything else is worth a warning.
        report_release_failure(e.status(), e.call().c_str(),
                               !e.object().empty() || !release.resource
                                   ? e.object()
                                   : release.resource->description());
    } catch (...) {
        // Ignored: at exit the driver may be shut down; a destructor never throws.
    }
}

void BufferBox::hand_over() noexcept {
    take_tracked(*this);  // dropped, not freed: the memory lives on in another box
}

void BufferBox::release(CUstream stream, bool use_stream) {
    // The common case, memory that only its resource frees, in straight-line code: the general
    // path below moves every field through a BufferRelease.
    if (tracked.load(std::memory_order_relaxed)) [[likely]] {
        std::shared_ptr<MemoryResource> freeing;
        std::shared_ptr<StreamBox> stream_box;
        CUdeviceptr pointer = 0;
        {
            LiveBuffers& live = live_buffer_list;
            std::lock_guard lock(live.mutex);
            if (!tracked.load(std::memory_order_relaxed)) return;  // the exit handler took it
            if (owned && handle && resource && !foreign) [[likely]] {
                unlink(live, *this);
                pointer = handle;
                freeing = std::move(resource);
                stream_box = std::move(free_stream);
                handle = 0;
                closed = true;
            }
        }
        if (pointer) [[likely]] {
            freeing->do_deallocate(pointer, size,
                                   use_stream ? stream : (stream_box ? stream_box->handle : nullptr));
            return;
        }
    }
    BufferRelease taken = take_tracked(*this);
    free(taken, use_stream ? stream : (taken.free_stream ? taken.free_stream->handle : nullptr));
}

}  // namespace detail

namespace {

std::string hex(CUdeviceptr pointer) {
    char text[32];
    std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(pointer));
    return text;
}

std::string describe_host(const void* pointer, std::size_t size) {
    char text[64];
    std::snprintf(text, sizeof text, "host memory %p of %zu bytes", pointer, size);
    return text;
}

// Runs `call` with the context of the stream current, pushing it only when needed.
template <class Call>
CUresult in_stream_context(const Stream& stream, Call&& call) {
    const auto& box = stream.box();
    if (!box || !box->context) return call();
    detail::ContextScope scope(*box->context);
    return call();
}

}  // namespace

namespace {

void check_pointer_and_size(const char* call, CUdeviceptr pointer, std::size_t size) {
    if (pointer == 0)
        throw InvalidArgumentError(std::string(call) + ": null pointer (size " +
                                   std::to_string(size) + " bytes)");
    if (size == 0) throw InvalidArgumentError(std::string(call) + ": size 0 at " + hex(pointer));
}

// A box for memory made elsewhere: accessibility and device from the resource, else from the
// driver (which must know the memory).
std::shared_ptr<detail::BufferBox> foreign_box(const char* call, CUdeviceptr pointer,
                                               std::size_t size,
                                               std::shared_ptr<MemoryResource> resource) {
    check_pointer_and_size(call, pointer, size);
    auto box = std::make_shared<detail::BufferBox>();
    box->handle = pointer;
    box->size = size;
    box->owned = false;
    if (resource) {
        box->device_ordinal = resource->device_ordinal();
        box->device_accessible = resource->is_device_accessible();
        box->host_accessible = resource->is_host_accessible();
        box->resource = std::move(resource);
        return box;
    }
    const auto& api = detail::driver();
    const std::string object = std::string(call) + " of " + hex(pointer) + " (" +
                               std::to_string(size) +
                               " bytes; memory unknown to CUDA needs a memory resource)";
    unsigned memory_type = 0;
    detail::check(api.cuPointerGetAttribute(&memory_type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, pointer),
                  "cuPointerGetAttribute", object);
    int is_managed = 0;
    detail::check(api.cuPointerGetAttribute(&is_managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, pointer),
                  "cuPointerGetAttribute", object);
    const bool host_memory = memory_type == CU_MEMORYTYPE_HOST && is_managed == 0;
    int ordinal = -1;  // pinned host memory: no device (and not asked: the query would fail)
    if (!host_memory &&
        api.cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, pointer) !=
            CUDA_SUCCESS)
        ordinal = 0;
    box->device_ordinal = ordinal;
    box->device_accessible = true;  // all memory the driver knows is mapped for the device (UVA)
    box->host_accessible = is_managed != 0 || memory_type == CU_MEMORYTYPE_HOST;
    return box;
}

}  // namespace

Buffer Buffer::from_handle(CUdeviceptr pointer, std::size_t size,
                           std::shared_ptr<MemoryResource> resource) {
    if (!resource)
        throw InvalidArgumentError(
            "Buffer::from_handle of " + hex(pointer) + " (" + std::to_string(size) +
            " bytes): no memory resource to hand the memory to; give an owner or a deleter, "
            "or use Buffer::wrap_unowned for memory that must not be freed");
    auto box = foreign_box("Buffer::from_handle", pointer, size, std::move(resource));
    box->owned = true;
    box->track();
    return detail::BoxAccess::make<Buffer>(std::move(box));
}

Buffer Buffer::from_handle(CUdeviceptr pointer, std::size_t size,
                           std::shared_ptr<MemoryResource> resource, std::shared_ptr<void> owner) {
    if (!owner)
        throw InvalidArgumentError("Buffer::from_handle of " + hex(pointer) + " (" +
                                   std::to_string(size) + " bytes): null owner");
    auto box = foreign_box("Buffer::from_handle", pointer, size, std::move(resource));
    box->foreign = std::make_unique<detail::BufferBox::Foreign>();
    box->foreign->owner = std::move(owner);
    box->track();
    return detail::BoxAccess::make<Buffer>(std::move(box));
}

Buffer Buffer::from_handle(CUdeviceptr pointer, std::size_t size,
                           std::shared_ptr<MemoryResource> resource, Deleter deleter) {
    if (!deleter)
        throw InvalidArgumentError("Buffer::from_handle of " + hex(pointer) + " (" +
                                   std::to_string(size) + " bytes): empty deleter");
    auto box = foreign_box("Buffer::from_handle", pointer, size, std::move(resource));
    box->foreign = std::make_unique<detail::BufferBox::Foreign>();
    box->foreign->deleter = std::move(deleter);
    box->track();
    return detail::BoxAccess::make<Buffer>(std::move(box));
}

Buffer Buffer::wrap_unowned(CUdeviceptr pointer, std::size_t size,
                            std::shared_ptr<MemoryResource> resource) {
    return detail::BoxAccess::make<Buffer>(
        foreign_box("Buffer::wrap_unowned", pointer, size, std::move(resource)));
}

CUdeviceptr Buffer::handle() const noexcept { return box_ ? box_->handle : 0; }

std::size_t Buffer::size() const noexcept { return box_ ? box_->size : 0; }

bool Buffer::is_closed() const noexcept { return !box_ || box_->closed; }

bool Buffer::owns_memory() const noexcept {
    return box_ && !box_->closed &&
           ((box_->owned && box_->resource) || box_->foreign);
}

bool Buffer::is_device_accessible() const { return open_box("is_device_accessible").device_accessible; }

bool Buffer::is_host_accessible() const { return open_box("is_host_accessible").host_accessible; }

int Buffer::device_ordinal() const { return open_box("device_ordinal").device_ordinal; }

Device Buffer::device() const {
    const int ordinal = open_box("device").device_ordinal;
    if (ordinal < 0)
        throw InvalidArgumentError("Buffer::device: " + description() +
                                   " is bound to no device (device_ordinal() is -1)");
    return Device(ordinal);
}

const std::shared_ptr<MemoryResource>& Buffer::memory_resource() const noexcept {
    static const std::shared_ptr<MemoryResource> none;
    return box_ ? box_->resource : none;
}

std::string Buffer::description() const {
    if (!box_) return "empty buffer";
    std::string out = box_->closed    ? std::string("closed buffer")
                      : box_->handle ? "buffer " + hex(box_->handle)
                                     : std::string("empty buffer");
    out += " of " + std::to_string(box_->size) + " bytes";
    if (box_->device_ordinal >= 0) out += " on device " + std::to_string(box_->device_ordinal);
    else out += " on no device";
    if (box_->resource) out += " (" + box_->resource->description() + ")";
    else if (!box_->closed && !owns_memory()) out += " (not owned)";
    return out;
}

detail::BufferBox& Buffer::open_box(const char* operation) const {
    if (!box_ || box_->closed) [[unlikely]]
        throw InvalidArgumentError(std::string("Buffer::") + operation + ": " + description() +
                                   (box_ ? " is closed" : " has no memory"));
    return *box_;
}

void Buffer::check_multiple_of(std::size_t unit, const char* operation) const {
    if (size() % unit != 0)
        throw InvalidArgumentError(std::string("Buffer::") + operation + ": " + description() +
                                   " is not a multiple of " + std::to_string(unit) + " bytes");
}

void Buffer::copy_to(const Buffer& destination, const Stream& stream) const {
    destination.copy_from(*this, stream);
}

void Buffer::copy_from(const Buffer& source, const Stream& stream) const {
    detail::BufferBox& to = open_box("copy_from");
    if (!source.box_ || source.box_->closed)
        throw InvalidArgumentError("Buffer::copy_from: source " + source.description() +
                                   " is closed (destination " + description() + ")");
    detail::BufferBox& from = *source.box_;
    if (from.size != to.size)
        throw InvalidArgumentError("Buffer::copy_from: sizes differ: source " +
                                   source.description() + ", destination " + description());
    if (to.size == 0) return;  // empty buffers: nothing to copy
    const CUresult status = in_stream_context(stream, [&] {
        return detail::driver().cuMemcpyAsync(to.handle, from.handle, to.size, stream.handle());
    });
    detail::check(status, "cuMemcpyAsync",
                  [&] { return "from " + source.description() + " to " + description(); });
}

void Buffer::copy_to(void* host, std::size_t size, const Stream& stream) const {
    detail::BufferBox& from = open_box("copy_to");
    if (!host && size != 0)  // an empty range may have no address
        throw InvalidArgumentError("Buffer::copy_to: null host pointer (" + std::to_string(size) +
                                   " bytes) as destination of " + description());
    if (size != from.size)
        throw InvalidArgumentError("Buffer::copy_to: sizes differ: " + description() + ", " +
                                   describe_host(host, size));
    if (size == 0) return;
    const CUresult status = in_stream_context(stream, [&] {
        return detail::driver().cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(host), from.handle,
                                              size, stream.handle());
    });
    detail::check(status, "cuMemcpyAsync",
                  [&] { return "from " + description() + " to " + describe_host(host, size); });
}

void Buffer::copy_from(const void* host, std::size_t size, const Stream& stream) const {
    detail::BufferBox& to = open_box("copy_from");
    if (!host && size != 0)  // an empty range may have no address
        throw InvalidArgumentError("Buffer::copy_from: null host pointer (" +
                                   std::to_string(size) + " bytes) as source for " +
                                   description());
    if (size != to.size)
        throw InvalidArgumentError("Buffer::copy_from: sizes differ: " +
                                   describe_host(host, size) + ", " + description());
    if (size == 0) return;
    const CUresult status = in_stream_context(stream, [&] {
        return detail::driver().cuMemcpyAsync(to.handle, reinterpret_cast<CUdeviceptr>(host),
                                              size, stream.handle());
    });
    detail::check(status, "cuMemcpyAsync",
                  [&] { return "from " + describe_host(host, size) + " to " + description(); });
}

void Buffer::fill_byte(std::uint8_t value, const Stream& stream) const {
    detail::BufferBox& box = open_box("fill_byte");
    if (box.size == 0) return;
    const CUresult status = in_stream_context(stream, [&] {
        return detail::driver().cuMemsetD8Async(box.handle, value, box.size, stream.handle());
    });
    detail::check(status, "cuMemsetD8Async", [&] { return description(); });
}

void Buffer::fill_uint32(std::uint32_t pattern, const Stream& stream) const {
    detail::BufferBox& box = open_box("fill_uint32");
    check_multiple_of(4, "fill_uint32");
    if (box.size == 0) return;
    const CUresult status = in_stream_context(stream, [&] {
        return detail::driver().cuMemsetD32Async(box.handle, pattern, box.size / 4, stream.handle());
    });
    detail::check(status, "cuMemsetD32Async", [&] { return description(); });
}

void Buffer::close(const Stream& stream) {
    if (is_closed()) return;
    const auto& stream_box = stream.box();  // its handle, read here: Stream::handle() is a call
    box_->release(stream_box ? stream_box->handle : nullptr, true);
}

void Buffer::close() {
    if (is_closed()) return;
    box_->release(nullptr, false);
}

std::span<std::byte> Buffer::bytes() const {
    detail::BufferBox& box = open_box("bytes");
    if (!box.host_accessible)
        throw InvalidArgumentError("Buffer::bytes: " + description() +
                                   " is not host accessible");
    return {reinterpret_cast<std::byte*>(box.handle), box.size};
}

}  // namespace cudacore
