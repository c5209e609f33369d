#include "cudacore/buffer.hpp"

#include "memory/buffer_box.hpp"
#include "errors/release_report.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/stream.hpp"

#include <cstdio>

namespace cudacore {

namespace detail {

BufferBox::~BufferBox() {
    if (!owned || !handle || !resource) return;
    try {
        resource->do_deallocate(handle, size, free_stream ? free_stream->handle : nullptr);
    } catch (const DriverError& e) {
        // Shutdown statuses are the normal end of a process; anything else is worth a warning.
        report_release_failure(e.status(), e.call().c_str(),
                               e.object().empty() ? resource->description() : e.object());
    } catch (...) {
        // Ignored: at exit the driver may be shut down; a destructor never throws.
    }
}

void BufferBox::release(CUstream stream) {
    const CUdeviceptr pointer = handle;
    handle = 0;
    free_stream.reset();
    if (owned && pointer && resource) resource->do_deallocate(pointer, size, stream);
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

Buffer Buffer::from_handle(CUdeviceptr pointer, std::size_t size,
                           std::shared_ptr<MemoryResource> resource) {
    if (pointer == 0)
        throw InvalidArgumentError("Buffer::from_handle: null pointer (size " +
                                   std::to_string(size) + " bytes)");
    if (size == 0)
        throw InvalidArgumentError("Buffer::from_handle: size 0 at " + hex(pointer));
    auto box = std::make_shared<detail::BufferBox>();
    box->handle = pointer;
    box->size = size;
    box->owned = false;
    if (resource) {
        box->device_ordinal = resource->device_ordinal();
        box->device_accessible = resource->is_device_accessible();
        box->host_accessible = resource->is_host_accessible();
        box->resource = std::move(resource);
        return Buffer(std::move(box));
    }
    // No resource: the driver says what the memory is.
    const auto& api = detail::driver();
    const std::string object = "Buffer::from_handle of " + hex(pointer) + " (" +
                               std::to_string(size) +
                               " bytes; memory unknown to CUDA needs a memory resource)";
    unsigned memory_type = 0;
    detail::check(api.cuPointerGetAttribute(&memory_type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, pointer),
                  "cuPointerGetAttribute", object);
    int is_managed = 0;
    detail::check(api.cuPointerGetAttribute(&is_managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, pointer),
                  "cuPointerGetAttribute", object);
    int ordinal = 0;
    if (api.cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, pointer) !=
        CUDA_SUCCESS)
        ordinal = 0;
    box->device_ordinal = ordinal;
    box->device_accessible = true;  // all memory the driver knows is mapped for the device (UVA)
    box->host_accessible = is_managed != 0 || memory_type == CU_MEMORYTYPE_HOST;
    return Buffer(std::move(box));
}

CUdeviceptr Buffer::handle() const noexcept { return box_ ? box_->handle : 0; }

std::size_t Buffer::size() const noexcept { return box_ ? box_->size : 0; }

bool Buffer::is_closed() const noexcept { return !box_ || box_->handle == 0; }

bool Buffer::owns_memory() const noexcept { return box_ && box_->owned; }

bool Buffer::is_device_accessible() const { return open_box("is_device_accessible").device_accessible; }

bool Buffer::is_host_accessible() const { return open_box("is_host_accessible").host_accessible; }

int Buffer::device_ordinal() const { return open_box("device_ordinal").device_ordinal; }

Device Buffer::device() const { return Device(open_box("device").device_ordinal); }

const std::shared_ptr<MemoryResource>& Buffer::memory_resource() const noexcept {
    static const std::shared_ptr<MemoryResource> none;
    return box_ ? box_->resource : none;
}

std::string Buffer::description() const {
    if (!box_) return "empty buffer";
    std::string out = box_->handle ? "buffer " + hex(box_->handle) : std::string("closed buffer");
    out += " of " + std::to_string(box_->size) + " bytes on device " +
           std::to_string(box_->device_ordinal);
    if (box_->resource) out += " (" + box_->resource->description() + ")";
    else out += " (not owned)";
    return out;
}

detail::BufferBox& Buffer::open_box(const char* operation) const {
    if (!box_ || !box_->handle) [[unlikely]]
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
    if (!source.box_ || !source.box_->handle)
        throw InvalidArgumentError("Buffer::copy_from: source " + source.description() +
                                   " is closed (destination " + description() + ")");
    detail::BufferBox& from = *source.box_;
    if (from.size != to.size)
        throw InvalidArgumentError("Buffer::copy_from: sizes differ: source " +
                                   source.description() + ", destination " + description());
    const CUresult status = in_stream_context(stream, [&] {
        return detail::driver().cuMemcpyAsync(to.handle, from.handle, to.size, stream.handle());
    });
    detail::check(status, "cuMemcpyAsync",
                  [&] { return "from " + source.description() + " to " + description(); });
}

void Buffer::copy_to(void* host, std::size_t size, const Stream& stream) const {
    detail::BufferBox& from = open_box("copy_to");
    if (!host)
        throw InvalidArgumentError("Buffer::copy_to: null host pointer (" + std::to_string(size) +
                                   " bytes) as destination of " + description());
    if (size != from.size)
        throw InvalidArgumentError("Buffer::copy_to: sizes differ: " + description() + ", " +
                                   describe_host(host, size));
    const CUresult status = in_stream_context(stream, [&] {
        return detail::driver().cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(host), from.handle,
                                              size, stream.handle());
    });
    detail::check(status, "cuMemcpyAsync",
                  [&] { return "from " + description() + " to " + describe_host(host, size); });
}

void Buffer::copy_from(const void* host, std::size_t size, const Stream& stream) const {
    detail::BufferBox& to = open_box("copy_from");
    if (!host)
        throw InvalidArgumentError("Buffer::copy_from: null host pointer (" +
                                   std::to_string(size) + " bytes) as source for " +
                                   description());
    if (size != to.size)
        throw InvalidArgumentError("Buffer::copy_from: sizes differ: " +
                                   describe_host(host, size) + ", " + description());
    const CUresult status = in_stream_context(stream, [&] {
        return detail::driver().cuMemcpyAsync(to.handle, reinterpret_cast<CUdeviceptr>(host),
                                              size, stream.handle());
    });
    detail::check(status, "cuMemcpyAsync",
                  [&] { return "from " + describe_host(host, size) + " to " + description(); });
}

void Buffer::fill_byte(std::uint8_t value, const Stream& stream) const {
    detail::BufferBox& box = open_box("fill_byte");
    const CUresult status = in_stream_context(stream, [&] {
        return detail::driver().cuMemsetD8Async(box.handle, value, box.size, stream.handle());
    });
    detail::check(status, "cuMemsetD8Async", [&] { return description(); });
}

void Buffer::fill_uint32(std::uint32_t pattern, const Stream& stream) const {
    detail::BufferBox& box = open_box("fill_uint32");
    check_multiple_of(4, "fill_uint32");
    const CUresult status = in_stream_context(stream, [&] {
        return detail::driver().cuMemsetD32Async(box.handle, pattern, box.size / 4, stream.handle());
    });
    detail::check(status, "cuMemsetD32Async", [&] { return description(); });
}

void Buffer::close(const Stream& stream) {
    if (is_closed()) return;
    box_->release(stream.handle());
}

void Buffer::close() {
    if (is_closed()) return;
    const std::shared_ptr<detail::StreamBox> stream = box_->free_stream;
    box_->release(stream ? stream->handle : nullptr);
}

std::span<std::byte> Buffer::bytes() const {
    detail::BufferBox& box = open_box("bytes");
    if (!box.host_accessible)
        throw InvalidArgumentError("Buffer::bytes: " + description() +
                                   " is not host accessible");
    return {reinterpret_cast<std::byte*>(box.handle), box.size};
}

}  // namespace cudacore
