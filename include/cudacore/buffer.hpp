// Over 200 lines: one class, Buffer; ownership, streams and closing each need their rules.
/// @file
/// Buffer: a range of device, pinned host or managed memory, with its size and its resource.
/// Copies share one allocation, freed on its deallocation stream when the last copy goes or at
/// close(); memory still held at exit is freed before the driver's teardown.
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

// Used by Buffer's inline copy and destructor (docs/design/buffers.md).
namespace detail {
struct BufferBoxCount {
    std::atomic<std::uint32_t> references{0};
};
void drop_buffer_box(BufferBoxCount* box) noexcept;
}  // namespace detail

/// Memory from a memory resource (or wrapped), freed when the last copy goes. Holds its
/// MemoryResource and deallocation stream. Every member that reads or uses the memory throws
/// InvalidArgumentError on a closed or empty buffer, on mismatched sizes and null host pointers,
/// and DriverError when a driver call fails; destruction never throws. Members may run from many
/// threads; close() and set_deallocation_stream() must not race with other uses of any copy.
class Buffer {
public:
    Buffer() noexcept = default;  ///< an empty buffer, which behaves as a closed one
    /// Shares `other`'s allocation (nothing is copied on the device).
    Buffer(const Buffer& other) noexcept : box_(other.box_) {
        if (box_) box_->references.fetch_add(1, std::memory_order_relaxed);
    }
    /// Takes `other`'s share; `other` becomes an empty buffer.
    Buffer(Buffer&& other) noexcept : box_(std::exchange(other.box_, nullptr)) {}
    /// Shares `other`'s allocation, dropping this one's share.
    Buffer& operator=(const Buffer& other) noexcept {
        Buffer(other).swap(*this);
        return *this;
    }
    /// Takes `other`'s share, dropping this one's.
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

    /// Frees `pointer`, once, when the last copy goes or at close().
    using Deleter = std::function<void(CUdeviceptr pointer, std::size_t size)>;

    /// Hands `size` bytes at `pointer`, which `resource` allocated, back to it to free when the
    /// last copy goes. InvalidArgumentError for a null pointer, size 0 or a null resource.
    static Buffer from_handle(CUdeviceptr pointer, std::size_t size,
                              std::shared_ptr<MemoryResource> resource);
    /// Keeps `owner`, which frees the memory, alive until the last copy goes or close().
    static Buffer from_handle(CUdeviceptr pointer, std::size_t size,
                              std::shared_ptr<MemoryResource> resource,
                              std::shared_ptr<void> owner);
    /// Calls `deleter(pointer, size)` once, when the last copy goes or at close().
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

    /// Wraps `size` bytes at `pointer` that the caller keeps valid and frees; accessibility and
    /// device are the resource's (held), else the driver's. InvalidArgumentError for null or 0.
    static Buffer wrap_unowned(CUdeviceptr pointer, std::size_t size,
                               std::shared_ptr<MemoryResource> resource = nullptr);
    /// wrap_unowned(CUdeviceptr, size, resource) for a pointer given as void*.
    static Buffer wrap_unowned(void* pointer, std::size_t size,
                               std::shared_ptr<MemoryResource> resource = nullptr) {
        return wrap_unowned(reinterpret_cast<CUdeviceptr>(pointer), size, std::move(resource));
    }

    CUdeviceptr handle() const noexcept;  ///< the address; 0 once closed or empty
    /// handle() as a pointer.
    void* data() const noexcept { return reinterpret_cast<void*>(handle()); }
    std::size_t size() const noexcept;  ///< the size in bytes (kept after close, for messages)
    bool is_closed() const noexcept;  ///< true after close() and for a default-constructed buffer
    /// Open: not closed and not default-constructed.
    explicit operator bool() const noexcept { return !is_closed(); }
    /// Whether the buffer frees its memory (false for wrap_unowned and once closed).
    bool owns_memory() const noexcept;

    /// Kernels may access the memory (the resource's answer, else the driver's when wrapped).
    bool is_device_accessible() const;
    /// The host may access the memory (pinned, managed, plain host memory).
    bool is_host_accessible() const;
    bool is_managed() const;  ///< managed memory (the resource's answer, else the driver's)
    /// The device the memory belongs to; -1 for memory of no device (pinned host memory).
    int device_ordinal() const;
    /// Device(device_ordinal()); InvalidArgumentError for memory of no device.
    Device device() const;
    /// The resource the memory came from; null once closed or when made without one.
    const std::shared_ptr<MemoryResource>& memory_resource() const noexcept;

    /// Copies this buffer into `destination`, of the same size, on `stream`.
    void copy_to(const Buffer& destination, const Stream& stream) const;
    /// Copies `source`, of the same size, into this buffer on `stream`.
    void copy_from(const Buffer& source, const Stream& stream) const;
    /// A copy in a new buffer from this one's resource (InvalidArgumentError without one).
    Buffer copy_to(const Stream& stream) const;
    /// Copies the buffer to `size` (== size()) bytes of host memory at `host` on `stream`.
    void copy_to(void* host, std::size_t size, const Stream& stream) const;
    /// Copies `size` (== size()) bytes of host memory at `host` into the buffer on `stream`.
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
    /// Copies a contiguous host range of size() bytes into the buffer.
    template <std::ranges::contiguous_range Range>
        requires(!std::is_same_v<std::remove_cvref_t<Range>, Buffer> &&
                 std::is_trivially_copyable_v<std::ranges::range_value_t<Range>>)
    void copy_from(const Range& host, const Stream& stream) const {
        copy_from(static_cast<const void*>(std::ranges::data(host)),
                  std::ranges::size(host) * sizeof(std::ranges::range_value_t<Range>), stream);
    }

    /// Sets every byte to `value` on `stream`.
    void fill_byte(std::uint8_t value, const Stream& stream) const;
    /// Sets every 32-bit word to `pattern` on `stream` (the size a multiple of 4).
    void fill_uint32(std::uint32_t pattern, const Stream& stream) const;
    /// Sets every 16-bit word to `pattern` on `stream` (the size a multiple of 2).
    void fill_uint16(std::uint16_t pattern, const Stream& stream) const;

    /// The stream the memory is freed on (stream 0 for from_handle and wrap_unowned buffers).
    Stream deallocation_stream() const;
    /// Makes `stream` (held) the deallocation stream of every copy; it adds no dependency.
    void set_deallocation_stream(const Stream& stream);

    /// Frees the memory now, ordered on `stream`, and closes every copy (a wrap_unowned buffer is
    /// only marked closed); twice does nothing. DriverError when the free fails (closed anyway).
    void close(const Stream& stream);
    /// close() on the deallocation stream (see deallocation_stream()).
    void close();
    /// Drops this object's share, leaving it empty, as destruction does.
    void reset() noexcept { *this = Buffer(); }

    /// The memory as host bytes; InvalidArgumentError when it is not host accessible.
    std::span<std::byte> bytes() const;
    /// bytes() as T, which must divide the size; the span does not hold the buffer.
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
std::ostream& operator<<(std::ostream& out, const Buffer& buffer);  ///< writes to_string(buffer)

}  // namespace cudacore

// std::hash<Buffer>: the allocation, which copies share and a closed Buffer keeps.
#ifndef CUDACORE_DOXYGEN
template <>
struct std::hash<cudacore::Buffer> {
    std::size_t operator()(const cudacore::Buffer& buffer) const noexcept {
        return std::hash<const void*>{}(buffer.box_);
    }
};
#endif  // CUDACORE_DOXYGEN
