#include "cudacore/buffer.hpp"

#include "memory/buffer_box.hpp"
#include "memory/pool_allocation.hpp"
#include "runtime/release/release.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/stream.hpp"
#include "support/box_access.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>

namespace cudacore {

namespace detail {

// What a box frees, taken out of it by whoever claimed it, so that freeing happens once and no
// one touches the box's fields while the driver frees.
struct BufferRelease {
    CUdeviceptr pointer = 0;
    std::size_t size = 0;
    std::shared_ptr<MemoryResource> resource;  // set when the resource frees the memory
    std::shared_ptr<StreamBox> free_stream;
    std::shared_ptr<void> owner;
    Buffer::Deleter deleter;
};

constinit std::atomic<bool> buffer_exit_release_armed{false};

namespace {

// Empties the box into what must be freed (nothing unless the caller claimed it) and marks it
// closed.
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

// Frees what a claimed box held; errors are reported (shutdown statuses silently), never thrown.
void free_quietly(BufferRelease& release) noexcept {
    try {
        BufferBox::free(release, release.free_stream, false);
    } catch (const DriverError& e) {
        // Shutdown statuses are the normal end of a process; anything else is worth a warning.
        check_release(e.status(), e.call().c_str(), [&] {
            return !e.object().empty() || !release.resource ? e.object()
                                                            : release.resource->description();
        });
    } catch (...) {
        // Ignored: at exit the driver may be shut down; a destructor never throws.
    }
}

// Frees the memory of a box its caller claimed, quietly (a destructor, the exit handler).
void free_claimed(BufferBox& box) noexcept {
    BufferRelease release = take(box);
    box.taken();
    free_quietly(release);
}

void release_at_exit(BufferBox& box) noexcept {
    // Only live boxes are claimed: one being taken by another thread is left to it, not waited for.
    if (box.state.load(std::memory_order_acquire) == BufferBox::kLive && box.claim())
        free_claimed(box);
}

void release_live_buffers() noexcept { for_each_buffer_box(release_at_exit); }

}  // namespace

// Static objects destroyed after the driver's teardown could only leak: registered once the
// driver is loaded (at the first buffer after that), this runs before it and frees every buffer
// still alive (runtime/release/release.hpp: release_at_exit).
void arm_buffer_exit_release() noexcept {
    if (buffer_exit_release_armed.exchange(true)) return;
    release_at_exit(release_live_buffers);
}

void BufferBox::note_free_stream(MemoryResource& resource, const std::shared_ptr<StreamBox>& stream) {
    if (resource.free_streams_ && stream) [[unlikely]] {
        resource.free_streams_->note(stream);
        // A stream the caller owns may be destroyed once its last Stream wrapper is gone: a free
        // queued there after that is marked now, while the handle is valid, so that the pool's
        // release waits for the mark and never touches the handle.
        if (stream->adopted) refresh_end_of_work(*stream);
    }
}

void BufferBox::free(BufferRelease& release, const std::shared_ptr<StreamBox>& stream_box,
                     bool on_request) {
    // Each step runs even when an earlier one throws; the first error is rethrown.
    std::exception_ptr error;
    if (release.resource && release.pointer) {
        try {
            MemoryResource& resource = *release.resource;
            const CUstream stream = stream_box ? stream_box->handle : nullptr;
            if (on_request)
                free_on_request(resource, release.pointer, release.size, stream);
            else
                resource.do_deallocate(release.pointer, release.size, stream);
            note_free_stream(resource, stream_box);
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

// Drops one reference to `box` (a slice's hold on its owner), as ~Buffer drops a copy's.
void drop_reference(BufferBox* box) noexcept {
    if (box && (box->references.load(std::memory_order_acquire) == 1 ||
                box->references.fetch_sub(1, std::memory_order_acq_rel) == 1))
        drop_buffer_box(box);
}

void drop_buffer_box(BufferBoxCount* counted) noexcept {
    auto* box = static_cast<BufferBox*>(counted);
    if (box->claim()) free_claimed(*box);
    BufferBox* parent = std::exchange(box->parent, nullptr);
    give_back_buffer_box(box);
    drop_reference(parent);  // a slice's owner, after the slice's box is back
}

void BufferBox::hand_over() noexcept {
    const bool claimed = claim();
    take(*this);  // dropped, not freed: the memory lives on in another box
    if (claimed) taken();
}

void BufferBox::release(const std::shared_ptr<StreamBox>& stream, bool use_stream) {
    if (!claim()) {
        take(*this);  // nothing to free: only marked closed, its resource dropped
        drop_reference(std::exchange(parent, nullptr));  // a slice lets go of its owner
        return;
    }
    // The common case, memory that only its resource frees, in straight-line code: the general
    // path below moves every field through a BufferRelease.
    if (!foreign) [[likely]] {
        const CUdeviceptr pointer = handle;
        std::shared_ptr<MemoryResource> freeing = std::move(resource);
        std::shared_ptr<StreamBox> stream_box = std::move(free_stream);
        handle = 0;
        closed = true;
        taken();
        const std::shared_ptr<StreamBox>& on = use_stream ? stream : stream_box;
        free_on_request(*freeing, pointer, size, on ? on->handle : nullptr);
        note_free_stream(*freeing, on);
        return;
    }
    BufferRelease taken_out = take(*this);
    taken();
    free(taken_out, use_stream ? stream : taken_out.free_stream, true);
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

// Runs `call` with the context of the stream current, pushing it only when needed. A copy or fill
// needs a stream: a closed one, or an empty one (moved from or reset), is refused.
template <class Call>
CUresult in_stream_context(const char* operation, const Stream& stream, Call&& call) {
    stream.check_usable(operation);
    const auto& box = detail::box_of(stream);
    if (!box->context) return call();
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
// driver. Memory the driver does not know (malloc'ed, static, on the stack) is plain host memory
// of no device, as cuda.core takes it: cuPointerGetAttributes, unlike cuPointerGetAttribute,
// answers for it with memory type 0 instead of failing.
void fill_foreign_box(detail::BufferBox* box, const char* call, CUdeviceptr pointer,
                      std::size_t size, std::shared_ptr<MemoryResource> resource) {
    check_pointer_and_size(call, pointer, size);
    box->handle = pointer;
    box->size = size;
    box->owned = false;
    if (resource) {
        box->device_ordinal = resource->device_ordinal();
        box->device_accessible = resource->is_device_accessible();
        box->host_accessible = resource->is_host_accessible();
        box->resource = std::move(resource);
        return;
    }
    const auto& api = detail::driver();
    unsigned memory_type = 0;
    int is_managed = 0;
    CUpointer_attribute attributes[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                        CU_POINTER_ATTRIBUTE_IS_MANAGED};
    void* values[] = {&memory_type, &is_managed};
    detail::check(api.cuPointerGetAttributes(2, attributes, values, pointer),
                  "cuPointerGetAttributes", [&] {
                      return std::string(call) + " of " + hex(pointer) + " (" +
                             std::to_string(size) + " bytes)";
                  });
    if (memory_type == 0 && is_managed == 0) {  // unknown to CUDA: pageable host memory
        box->device_ordinal = -1;
        box->device_accessible = false;
        box->host_accessible = true;
        return;
    }
    const bool host_memory = memory_type == CU_MEMORYTYPE_HOST && is_managed == 0;
    int ordinal = -1;  // pinned host memory: no device (and not asked: the query would fail)
    if (!host_memory &&
        api.cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, pointer) !=
            CUDA_SUCCESS)
        ordinal = 0;
    box->device_ordinal = ordinal;
    box->device_accessible = true;  // all memory the driver knows is mapped for the device (UVA)
    box->host_accessible = is_managed != 0 || memory_type == CU_MEMORYTYPE_HOST;
}

}  // namespace

Buffer Buffer::from_handle(CUdeviceptr pointer, std::size_t size,
                           std::shared_ptr<MemoryResource> resource) {
    if (!resource)
        throw InvalidArgumentError(
            "Buffer::from_handle of " + hex(pointer) + " (" + std::to_string(size) +
            " bytes): no memory resource to hand the memory to; give an owner or a deleter, "
            "or use Buffer::wrap_unowned for memory that must not be freed");
    detail::BufferBoxPtr box;
    fill_foreign_box(&*box, "Buffer::from_handle", pointer, size, std::move(resource));
    box->owned = true;
    box->track();
    return detail::make_buffer(box);
}

Buffer Buffer::from_handle(CUdeviceptr pointer, std::size_t size,
                           std::shared_ptr<MemoryResource> resource, std::shared_ptr<void> owner) {
    if (!owner)
        throw InvalidArgumentError("Buffer::from_handle of " + hex(pointer) + " (" +
                                   std::to_string(size) + " bytes): null owner");
    detail::BufferBoxPtr box;
    fill_foreign_box(&*box, "Buffer::from_handle", pointer, size, std::move(resource));
    box->foreign = std::make_unique<detail::BufferBox::Foreign>();
    box->foreign->owner = std::move(owner);
    box->track();
    return detail::make_buffer(box);
}

Buffer Buffer::from_handle(CUdeviceptr pointer, std::size_t size,
                           std::shared_ptr<MemoryResource> resource, Deleter deleter) {
    if (!deleter)
        throw InvalidArgumentError("Buffer::from_handle of " + hex(pointer) + " (" +
                                   std::to_string(size) + " bytes): empty deleter");
    detail::BufferBoxPtr box;
    fill_foreign_box(&*box, "Buffer::from_handle", pointer, size, std::move(resource));
    box->foreign = std::make_unique<detail::BufferBox::Foreign>();
    box->foreign->deleter = std::move(deleter);
    box->track();
    return detail::make_buffer(box);
}

Buffer Buffer::wrap_unowned(CUdeviceptr pointer, std::size_t size,
                            std::shared_ptr<MemoryResource> resource) {
    detail::BufferBoxPtr box;
    fill_foreign_box(&*box, "Buffer::wrap_unowned", pointer, size, std::move(resource));
    return detail::make_buffer(box);
}

CUdeviceptr Buffer::handle() const noexcept {
    const detail::BufferBox* box = detail::box_of(*this);
    return box && box->is_open() ? box->handle : 0;
}

std::size_t Buffer::size() const noexcept { return box_ ? detail::box_of(*this)->size : 0; }

bool Buffer::is_closed() const noexcept { return !box_ || !detail::box_of(*this)->is_open(); }

bool Buffer::owns_memory() const noexcept {
    const detail::BufferBox* box = detail::box_of(*this);
    return box && box->is_open() &&
           ((box->owned && box->resource) || (box->foreign && box->foreign->frees_memory()));
}

bool Buffer::is_device_accessible() const { return open_box("is_device_accessible").device_accessible; }

bool Buffer::is_host_accessible() const { return open_box("is_host_accessible").host_accessible; }

bool Buffer::is_managed() const {
    detail::BufferBox& box = open_box("is_managed");
    if (box.resource) return box.resource->is_managed();
    int managed = 0;
    detail::check(detail::driver().cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                                         box.handle),
                  "cuPointerGetAttribute", [&] { return "is managed of " + description(); });
    return managed != 0;
}

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
    return box_ ? detail::box_of(*this)->resource : none;
}

std::string Buffer::description() const {
    const detail::BufferBox* box = detail::box_of(*this);
    if (!box) return "empty buffer";
    std::string out = !box->is_open() ? std::string("closed buffer")
                      : box->handle   ? "buffer " + hex(box->handle)
                                      : std::string("empty buffer");
    out += " of " + std::to_string(box->size) + " bytes";
    if (box->device_ordinal >= 0) out += " on device " + std::to_string(box->device_ordinal);
    else out += " on no device";
    if (box->resource) out += " (" + box->resource->description() + ")";
    else if (!box->closed && !owns_memory()) out += " (not owned)";
    if (box->parent)  // a slice: where it lies
        out += ", part of " + (box->parent->closed ? std::string("a closed buffer")
                                                   : "buffer " + hex(box->parent->handle)) +
               " of " + std::to_string(box->parent->size) + " bytes";
    return out;
}

detail::BufferBox& Buffer::open_box(const char* operation) const {
    if (!box_ || !detail::box_of(*this)->is_open()) [[unlikely]]
        throw InvalidArgumentError(std::string("Buffer::") + operation + ": " + description() +
                                   (!box_                          ? " has no memory"
                                    : detail::box_of(*this)->closed ? " is closed"
                                                                    : " is closed (a slice of a "
                                                                      "buffer that was closed)"));
    return *detail::box_of(*this);
}

void Buffer::check_multiple_of(std::size_t unit, const char* operation) const {
    if (size() % unit != 0)
        throw InvalidArgumentError(std::string("Buffer::") + operation + ": " + description() +
                                   " is not a multiple of " + std::to_string(unit) + " bytes");
}

void Buffer::copy_to(const Buffer& destination, const Stream& stream) const {
    destination.copy_from(*this, stream);
}

Buffer Buffer::copy_to(const Stream& stream) const {
    const detail::BufferBox& box = open_box("copy_to");
    if (!box.resource)
        throw InvalidArgumentError("Buffer::copy_to: a destination buffer must be provided: " +
                                   description() + " has no memory resource to allocate one");
    Buffer destination = box.resource->allocate(box.size, stream);
    destination.copy_from(*this, stream);
    return destination;
}

void Buffer::copy_from(const Buffer& source, const Stream& stream) const {
    detail::BufferBox& to = open_box("copy_from");
    if (source.is_closed())
        throw InvalidArgumentError("Buffer::copy_from: source " + source.description() +
                                   " is closed (destination " + description() + ")");
    detail::BufferBox& from = *detail::box_of(source);
    if (from.size != to.size)
        throw InvalidArgumentError("Buffer::copy_from: sizes differ: source " +
                                   source.description() + ", destination " + description() +
                                   " (copies between buffers need equal sizes, as in cuda.core)");
    if (to.size == 0) return;  // empty buffers: nothing to copy
    const CUresult status = in_stream_context("Buffer::copy_from", stream, [&] {
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
    const CUresult status = in_stream_context("Buffer::copy_to", stream, [&] {
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
    const CUresult status = in_stream_context("Buffer::copy_from", stream, [&] {
        return detail::driver().cuMemcpyAsync(to.handle, reinterpret_cast<CUdeviceptr>(host),
                                              size, stream.handle());
    });
    detail::check(status, "cuMemcpyAsync",
                  [&] { return "from " + describe_host(host, size) + " to " + description(); });
}

void Buffer::fill_byte(std::uint8_t value, const Stream& stream) const {
    detail::BufferBox& box = open_box("fill_byte");
    if (box.size == 0) return;
    const CUresult status = in_stream_context("Buffer::fill_byte", stream, [&] {
        return detail::driver().cuMemsetD8Async(box.handle, value, box.size, stream.handle());
    });
    detail::check(status, "cuMemsetD8Async", [&] { return description(); });
}

void Buffer::fill_uint32(std::uint32_t pattern, const Stream& stream) const {
    detail::BufferBox& box = open_box("fill_uint32");
    check_multiple_of(4, "fill_uint32");
    if (box.size == 0) return;
    const CUresult status = in_stream_context("Buffer::fill_uint32", stream, [&] {
        return detail::driver().cuMemsetD32Async(box.handle, pattern, box.size / 4, stream.handle());
    });
    detail::check(status, "cuMemsetD32Async", [&] { return description(); });
}

void Buffer::fill_uint16(std::uint16_t pattern, const Stream& stream) const {
    detail::BufferBox& box = open_box("fill_uint16");
    check_multiple_of(2, "fill_uint16");
    stream.check_open("Buffer::fill_uint16");
    const auto& stream_box = detail::box_of(stream);
    std::optional<detail::ContextScope> scope;
    if (stream_box && stream_box->context && detail::is_default_stream(stream.handle()))
        scope.emplace(*stream_box->context);
    detail::check(detail::driver().cuMemsetD16Async(box.handle, pattern, box.size / 2, stream.handle()),
                  "cuMemsetD16Async", [&] { return description(); });
}

// A slice's memory is freed with its owner: its deallocation stream is the owner's.
Stream Buffer::deallocation_stream() const {
    const detail::BufferBox& box = open_box("deallocation_stream");
    return detail::BoxAccess::make<Stream>((box.parent ? *box.parent : box).free_stream);
}

void Buffer::set_deallocation_stream(const Stream& stream) {
    detail::BufferBox& box = open_box("set_deallocation_stream");
    stream.check_open("Buffer::set_deallocation_stream");
    (box.parent ? *box.parent : box).free_stream = detail::box_of(stream);
}

void Buffer::close(const Stream& stream) {
    if (is_closed()) return;
    stream.check_open("Buffer::close");
    detail::box_of(*this)->release(detail::box_of(stream), true);
}

void Buffer::close() {
    if (is_closed()) return;
    detail::box_of(*this)->release(nullptr, false);
}

std::span<std::byte> Buffer::bytes() const {
    detail::BufferBox& box = open_box("bytes");
    if (!box.host_accessible)
        throw InvalidArgumentError("Buffer::bytes: " + description() +
                                   " is not host accessible");
    return {reinterpret_cast<std::byte*>(box.handle), box.size};
}

}  // namespace cudacore
