// Over 200 lines: one class, Buffer; ownership, streams and closing each need their rules.
/// @file
/// Buffer: a range of device, pinned host or managed memory, with its size and its resource.
///
/// Copies share one allocation; it is freed on its deallocation stream when the last copy goes,
/// or earlier by close(). A Buffer holds its MemoryResource and that stream. Memory still held at
/// exit is freed before the driver's teardown (docs/design/release.md). allocate(0) gives an empty,
/// open buffer. Errors: a closed buffer, mismatched sizes or null host pointers throw
/// InvalidArgumentError; failed driver calls DriverError. Destruction never throws. Copies, fills
/// and queries may run from several threads; close() must not race with other uses of any copy.
#pragma once

#include "cudacore/device.hpp"
#include "cudacore/memory_resource.hpp"
#include "cudacore/stream.hpp"

#include <cuda.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <ranges>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

namespace cudacore {

// Here because Buffer's copy and destructor are inline and use them: the count of the Buffers
// sharing an allocation, and what frees it when the last goes (docs/design/buffers.md).
namespace detail {
struct BufferBoxCount {
    std::atomic<std::uint32_t> references{0};
};
void drop_buffer_box(BufferBoxCount* box) noexcept;
}  // namespace detail

/// Memory from a memory resource (or wrapped), freed when the last copy goes (ownership and
/// lifetime: this file's description).
class Buffer {
public:
    /// An empty buffer: every use but the queries below throws InvalidArgumentError, like a closed
    /// one. Useful as a placeholder.
    Buffer() noexcept = default;
    /// Shares `other`'s allocation (one more reference; nothing is copied on the device).
    Buffer(const Buffer& other) noexcept : box_(other.box_) {
        if (box_) box_->references.fetch_add(1, std::memory_order_relaxed);
    }
    /// Takes `other`'s share; `other` becomes an empty buffer.
    Buffer(Buffer&& other) noexcept : box_(std::exchange(other.box_, nullptr)) {}
    /// Shares `other`'s allocation, dropping this one's share (freeing it if it was the last).
    Buffer& operator=(const Buffer& other) noexcept {
        Buffer(other).swap(*this);
        return *this;
    }
    /// Takes `other`'s share, dropping this one's (freeing it if it was the last).
    Buffer& operator=(Buffer&& other) noexcept {
        Buffer(std::move(other)).swap(*this);
        return *this;
    }
    ~Buffer() {
        // The only reference needs no atomic read-modify-write: nobody else can take another.
        if (box_ && (box_->references.load(std::memory_order_acquire) == 1 ||
                     box_->references.fetch_sub(1, std::memory_order_acq_rel) == 1))
            detail::drop_buffer_box(box_);
    }
    /// Exchanges the allocations the two objects refer to.
    void swap(Buffer& other) noexcept { std::swap(box_, other.box_); }

    /// Frees `pointer` (how it is freed, once, when the last copy goes or at close()):
    using Deleter = std::function<void(CUdeviceptr pointer, std::size_t size)>;

    /// Hands `size` bytes at `pointer`, which `resource` allocated, to that resource: it frees
    /// them (resource->deallocate on the default stream, or close(stream)'s) when the last copy
    /// goes, as cuda.core's Buffer.from_handle(ptr, size, mr) does. Accessibility and device are
    /// the resource's. Throws InvalidArgumentError for a null pointer, size 0 or a null resource
    /// (wrap memory that must not be freed with wrap_unowned).
    static Buffer from_handle(CUdeviceptr pointer, std::size_t size,
                              std::shared_ptr<MemoryResource> resource);
    /// Keeps `owner` (anything that frees the memory when it goes) alive until the last copy goes
    /// or close(). Accessibility and device: the resource's, else the driver's, as wrap_unowned.
    /// Throws InvalidArgumentError for a null pointer, size 0 or a null owner.
    static Buffer from_handle(CUdeviceptr pointer, std::size_t size,
                              std::shared_ptr<MemoryResource> resource,
                              std::shared_ptr<void> owner);
    /// Calls `deleter(pointer, size)` once, when the last copy goes or at close() (a throwing
    /// deleter's error reaches close(); from a destructor it is ignored). Resource as above.
    /// Throws InvalidArgumentError for a null pointer, size 0 or an empty deleter.
    static Buffer from_handle(CUdeviceptr pointer, std::size_t size,
                              std::shared_ptr<MemoryResource> resource, Deleter deleter);
    /// from_handle(CUdeviceptr, size, resource) for a pointer given as void*.
    static Buffer from_handle(void* pointer, std::size_t size,
                              std::shared_ptr<MemoryResource> resource) {
        return from_handle(reinterpret_cast<CUdeviceptr>(pointer), size, std::move(resource));
    }
    /// from_handle(CUdeviceptr, size, resource, owner) for a pointer given as void*.
    static Buffer from_handle(void* pointer, std::size_t size,
                              std::shared_ptr<MemoryResource> resource,
                              std::shared_ptr<void> owner) {
        return from_handle(reinterpret_cast<CUdeviceptr>(pointer), size, std::move(resource),
                           std::move(owner));
    }
    /// from_handle(CUdeviceptr, size, resource, deleter) for a pointer given as void*.
    static Buffer from_handle(void* pointer, std::size_t size,
                              std::shared_ptr<MemoryResource> resource, Deleter deleter) {
        return from_handle(reinterpret_cast<CUdeviceptr>(pointer), size, std::move(resource),
                           std::move(deleter));
    }

    /// Wraps `size` bytes at `pointer` without taking ownership: the caller keeps the memory valid
    /// and frees it. Accessibility and device are the resource's (kept alive), else the driver's
    /// (NoDriverError without one); memory the driver does not know is host memory of device -1.
    /// Throws InvalidArgumentError for a null pointer or size 0, DriverError on a refused query.
    static Buffer wrap_unowned(CUdeviceptr pointer, std::size_t size,
                               std::shared_ptr<MemoryResource> resource = nullptr);
    /// wrap_unowned(CUdeviceptr, size, resource) for a pointer given as void*.
    static Buffer wrap_unowned(void* pointer, std::size_t size,
                               std::shared_ptr<MemoryResource> resource = nullptr) {
        return wrap_unowned(reinterpret_cast<CUdeviceptr>(pointer), size, std::move(resource));
    }

    /// The address (0 once closed, and for an empty buffer of size 0), as a device pointer and as
    /// a host pointer.
    CUdeviceptr handle() const noexcept;
    /// handle() as a pointer.
    void* data() const noexcept { return reinterpret_cast<void*>(handle()); }
    /// The size in bytes (kept after close, for messages).
    std::size_t size() const noexcept;
    /// True after close() and for a default-constructed buffer.
    bool is_closed() const noexcept;
    /// Open: not closed and not default-constructed.
    explicit operator bool() const noexcept { return !is_closed(); }
    /// Whether the buffer frees its memory (false for wrap_unowned and once closed).
    bool owns_memory() const noexcept;

    /// Kernels may access the memory: its resource's is_device_accessible(), or without a
    /// resource what the driver said when it was wrapped (false for memory unknown to CUDA).
    /// Throws InvalidArgumentError when closed.
    bool is_device_accessible() const;
    /// The host may access the memory (pinned, managed, plain host memory), as above. Throws
    /// InvalidArgumentError when closed.
    bool is_host_accessible() const;
    /// Managed memory: its resource's is_managed(), or without a resource what the driver says
    /// (CU_POINTER_ATTRIBUTE_IS_MANAGED). Throws InvalidArgumentError when closed.
    bool is_managed() const;
    /// The device the memory belongs to; -1 for memory bound to no device (pinned host memory, as
    /// cuda.core reports), for which device() throws InvalidArgumentError.
    int device_ordinal() const;
    /// Device(device_ordinal()). Throws InvalidArgumentError when closed or bound to no device.
    Device device() const;
    /// The resource the memory came from: null once closed, and for buffers made without a
    /// resource. A copy of the pointer keeps the resource alive; a device's default resource
    /// (Device::allocate) lives as long as the process in any case.
    const std::shared_ptr<MemoryResource>& memory_resource() const noexcept;

    /// Copies this buffer into `destination` on `stream`. Both must have the same size (copy a
    /// slice for part of one): else InvalidArgumentError naming both, and nothing is copied.
    void copy_to(const Buffer& destination, const Stream& stream) const;
    /// Copies `source` into this buffer on `stream` (cuMemcpyAsync); throws as copy_to.
    void copy_from(const Buffer& source, const Stream& stream) const;
    /// cuda.core's copy_to without a destination: a new buffer of the same size from this
    /// buffer's memory resource (allocated on `stream`), into which this one is copied on
    /// `stream`. Throws InvalidArgumentError when closed or made without a resource ("a
    /// destination buffer must be provided"), and what the resource's allocate throws.
    Buffer copy_to(const Stream& stream) const;
    /// Copies the buffer to `size` bytes of host memory at `host` on `stream`. InvalidArgumentError
    /// when closed, when `size` is not size(), or when `host` is null with a non-zero size;
    /// DriverError when the copy cannot be enqueued. Size 0 copies nothing.
    void copy_to(void* host, std::size_t size, const Stream& stream) const;
    /// Copies `size` bytes of host memory at `host` into the buffer on `stream`; throws as the
    /// copy_to above.
    void copy_from(const void* host, std::size_t size, const Stream& stream) const;

    /// The same for any contiguous host range of trivially copyable values (vector, array, span).
    template <std::ranges::contiguous_range Range>
        requires(!std::is_same_v<std::remove_cvref_t<Range>, Buffer> &&
                 std::is_trivially_copyable_v<std::ranges::range_value_t<Range>>)
    void copy_to(Range&& host, const Stream& stream) const {
        static_assert(!std::is_const_v<std::remove_reference_t<std::ranges::range_reference_t<Range>>>,
                      "copy_to needs a writable host range");
        copy_to(static_cast<void*>(std::ranges::data(host)),
                std::ranges::size(host) * sizeof(std::ranges::range_value_t<Range>), stream);
    }
    /// Copies a contiguous host range (its byte size must equal size()) into the buffer.
    template <std::ranges::contiguous_range Range>
        requires(!std::is_same_v<std::remove_cvref_t<Range>, Buffer> &&
                 std::is_trivially_copyable_v<std::ranges::range_value_t<Range>>)
    void copy_from(const Range& host, const Stream& stream) const {
        copy_from(static_cast<const void*>(std::ranges::data(host)),
                  std::ranges::size(host) * sizeof(std::ranges::range_value_t<Range>), stream);
    }

    /// Sets every byte to `value` / every 32-bit word to `pattern` (the size must be a multiple
    /// of 4), asynchronously on `stream`.
    void fill_byte(std::uint8_t value, const Stream& stream) const;
    /// Sets every 32-bit word to `pattern` (cuMemsetD32Async); InvalidArgumentError when the
    /// size is not a multiple of 4 or the buffer is closed.
    void fill_uint32(std::uint32_t pattern, const Stream& stream) const;
    /// Sets every 16-bit word to `pattern` (cuMemsetD16Async; the size must be a multiple of 2).
    void fill_uint16(std::uint16_t pattern, const Stream& stream) const;

    /// The stream close() without a stream, the last copy and the exit handler free the memory
    /// on: the allocation stream unless set_deallocation_stream named another; stream 0 for
    /// from_handle, wrap_unowned and empty buffers. Throws InvalidArgumentError when closed.
    Stream deallocation_stream() const;
    /// Makes `stream` the deallocation stream of this buffer and every copy (cuda.core's
    /// set_deallocation_stream). Adds no dependency: order every use before the free on `stream`
    /// (`consumer.wait(producer.record())`). Keeps `stream` alive until the free and drops the
    /// previous one. Throws InvalidArgumentError when the buffer or `stream` is closed. Must not
    /// race with close() or another set_deallocation_stream on any copy (docs/memory.md).
    void set_deallocation_stream(const Stream& stream);

    /// Frees the memory now, ordered on `stream`; every copy becomes closed and drops its resource.
    /// Closing twice does nothing; a wrap_unowned buffer is only marked closed. After a device
    /// reset, drop the buffer instead (docs/errors-and-lifetime.md). Throws DriverError when the
    /// free fails (the buffer is closed all the same).
    void close(const Stream& stream);
    /// close() on the deallocation stream (see deallocation_stream()).
    void close();
    /// Drops this object's share (as std::shared_ptr::reset does), leaving it empty: the memory
    /// is freed when the last copy goes, as at destruction. Never throws.
    void reset() noexcept { *this = Buffer(); }

    /// The memory as host bytes / values. Throws InvalidArgumentError when it is not host
    /// accessible, closed, or (span<T>) its size is not a multiple of sizeof(T).
    std::span<std::byte> bytes() const;
    /// The memory as a span of T (bytes() reinterpreted); throws as bytes(), and when the size
    /// is not a multiple of sizeof(T). The span does not hold the buffer.
    template <class T>
    std::span<T> span() const {
        static_assert(std::is_trivially_copyable_v<T>, "span<T> needs a trivially copyable T");
        const std::span<std::byte> raw = bytes();
        check_multiple_of(sizeof(T), "span");
        return {reinterpret_cast<T*>(raw.data()), raw.size() / sizeof(T)};
    }

    /// "buffer 0x7f0000000000 of 4096 bytes on device 0 (memory pool of device 0)".
    std::string description() const;

    /// Same allocation (shared by copies).
    bool operator==(const Buffer& other) const noexcept { return box_ == other.box_; }

private:
    friend struct detail::BoxAccess;
    friend struct std::hash<Buffer>;  // hashes the allocation, as operator== compares it
    /// Adopts `box` and the reference it was made with.
    explicit Buffer(detail::BufferBoxCount* box) noexcept : box_(box) {}
    /// The box of an open buffer, else InvalidArgumentError naming `operation`.
    detail::BufferBox& open_box(const char* operation) const;
    void check_multiple_of(std::size_t unit, const char* operation) const;

    detail::BufferBoxCount* box_ = nullptr;
};

/// Buffer::description(): "buffer 0x7f0000000000 of 4096 bytes on device 0 (...)".
std::string to_string(const Buffer& buffer);
/// Writes to_string(buffer).
std::ostream& operator<<(std::ostream& out, const Buffer& buffer);

}  // namespace cudacore

// std::hash<Buffer>: the allocation (copies share it; a closed Buffer keeps its identity);
// cudacore/identity.hpp lists it with the other objects' hashes.
#ifndef CUDACORE_DOXYGEN
template <>
struct std::hash<cudacore::Buffer> {
    std::size_t operator()(const cudacore::Buffer& buffer) const noexcept {
        return std::hash<const void*>{}(buffer.box_);
    }
};
#endif  // CUDACORE_DOXYGEN
