/// @file
/// CCCL interop: cudacore streams as cuda::stream_ref, memory resources as cuda::mr resources
/// (for CCCL containers, Thrust and CUB), Buffers as device spans. Header-only and not in
/// cudacore.hpp: it needs the toolkit's CCCL headers and must come before any other CCCL header.
/// Guide: docs/memory.md, "CCCL".
///
///     auto resource = std::make_shared<DeviceMemoryResource>(device);
///     cudacore::cccl::resource_adaptor<DeviceMemoryResource> mr(resource);
///     static_assert(cuda::mr::async_resource_with<decltype(mr), cuda::mr::device_accessible>);
///     void* p = mr.allocate_async(1024, 256, cudacore::cccl::to_stream_ref(stream));
///     thrust::sort(thrust::cuda::par_nosync(cudacore::cccl::thrust_allocator(mr, stream))
///                      .on(stream.handle()), first, last);
#pragma once

#ifndef LIBCUDACXX_ENABLE_EXPERIMENTAL_MEMORY_RESOURCE
#define LIBCUDACXX_ENABLE_EXPERIMENTAL_MEMORY_RESOURCE
#endif

#include "cudacore/buffer.hpp"
#include "cudacore/device_memory_resource.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/managed_memory_resource.hpp"
#include "cudacore/memory_resource.hpp"
#include "cudacore/legacy_pinned_memory_resource.hpp"
#include "cudacore/stream.hpp"

#include <cuda/memory_resource>
#include <cuda/std/span>
#include <cuda/stream_ref>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

namespace cudacore::cccl {

/// The stream as a cuda::stream_ref, which does not own it.
inline ::cuda::stream_ref to_stream_ref(const Stream& stream) noexcept {
    return ::cuda::stream_ref{stream.handle()};
}
/// Wraps the ref's stream without owning it (DriverError when the driver does not know it).
inline Stream from_stream_ref(::cuda::stream_ref stream) { return Stream::from_handle(stream.get()); }

/// Which cuda::mr properties a cudacore resource type has.
template <class Resource>
struct resource_properties;
/// Device memory: device-accessible only.
template <>
struct resource_properties<DeviceMemoryResource> {
    static constexpr bool device_accessible = true;  ///< cuda::mr::device_accessible
    static constexpr bool host_accessible = false;   ///< not cuda::mr::host_accessible
};
/// Pinned host memory: accessible from the host and from devices.
template <>
struct resource_properties<LegacyPinnedMemoryResource> {
    static constexpr bool device_accessible = true;  ///< cuda::mr::device_accessible
    static constexpr bool host_accessible = true;    ///< cuda::mr::host_accessible
};
/// Managed memory: accessible from the host and from devices.
template <>
struct resource_properties<ManagedMemoryResource> {
    static constexpr bool device_accessible = true;  ///< cuda::mr::device_accessible
    static constexpr bool host_accessible = true;    ///< cuda::mr::host_accessible
};

/// The largest alignment every cudacore resource guarantees.
inline constexpr std::size_t max_alignment = 256;

/// A cudacore resource as a cuda::mr resource, synchronous and stream-ordered; holds its resource
/// and stream, and memory it hands out goes back through an adaptor of the same resource. Every
/// call throws what the resource throws, and InvalidArgumentError for alignments over 256 bytes.
/// Copies share the resource; thread-safe like the resource.
template <class Resource>
class resource_adaptor {
    using properties = resource_properties<Resource>;

public:
    /// Adapts `resource` (held), with a new non-blocking stream of its device for sync calls.
    explicit resource_adaptor(std::shared_ptr<Resource> resource)
        : resource_(std::move(resource)), stream_(default_stream(*resource_)) {}
    /// Adapts `resource` (held), ordering the synchronous calls on `stream` (held).
    resource_adaptor(std::shared_ptr<Resource> resource, Stream stream)
        : resource_(std::move(resource)), stream_(std::move(stream)) {}

    /// `bytes` from the resource, ordered on stream() and waited for: usable at once.
    void* allocate(std::size_t bytes, std::size_t alignment = max_alignment) {
        void* pointer = allocate_async(bytes, alignment, to_stream_ref(stream_));
        stream_.sync();
        return pointer;
    }
    /// Gives `pointer` (of `bytes`) back to the resource, ordered on stream(), without waiting.
    void deallocate(void* pointer, std::size_t bytes, std::size_t alignment = max_alignment) {
        deallocate_async(pointer, bytes, alignment, to_stream_ref(stream_));
    }
    /// `bytes` from the resource, usable by work on `stream` (or after it).
    void* allocate_async(std::size_t bytes, std::size_t alignment, ::cuda::stream_ref stream) {
        check_alignment(alignment);
        return reinterpret_cast<void*>(resource_->allocate_pointer(bytes, stream.get()));
    }
    /// Gives `pointer` (of `bytes`) back, ordered on `stream`.
    void deallocate_async(void* pointer, std::size_t bytes, std::size_t /*alignment*/,
                          ::cuda::stream_ref stream) {
        resource_->deallocate_pointer(reinterpret_cast<CUdeviceptr>(pointer), bytes, stream.get());
    }

    /// The same resource.
    bool operator==(const resource_adaptor& other) const noexcept {
        return resource_ == other.resource_;
    }
    /// Not the same resource.
    bool operator!=(const resource_adaptor& other) const noexcept { return !(*this == other); }

    friend void get_property(const resource_adaptor&, ::cuda::mr::device_accessible) noexcept
        requires(properties::device_accessible)
    {}
    friend void get_property(const resource_adaptor&, ::cuda::mr::host_accessible) noexcept
        requires(properties::host_accessible)
    {}

    /// The adapted resource.
    const std::shared_ptr<Resource>& resource() const noexcept { return resource_; }
    /// The stream the synchronous allocate / deallocate are ordered on.
    const Stream& stream() const noexcept { return stream_; }

private:
    /// A new stream on the resource's device (pinned memory: on the device that allocates it).
    static Stream default_stream(const Resource& resource) {
        if constexpr (requires { resource.allocating_device_ordinal(); }) {
            if (resource.device_ordinal() < 0)
                return Device(resource.allocating_device_ordinal()).create_stream();
        }
        return resource.device().create_stream();
    }

    void check_alignment(std::size_t alignment) const {
        if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > max_alignment) {
            throw InvalidArgumentError("cudacore::cccl::resource_adaptor: alignment " +
                                       std::to_string(alignment) + " is not a power of two up to " +
                                       std::to_string(max_alignment) + " (" +
                                       resource_->description() + ")");
        }
    }

    std::shared_ptr<Resource> resource_;
    Stream stream_;
};

/// A Buffer's memory as a span of T, for CCCL algorithms; the span does not hold the Buffer.
/// InvalidArgumentError for a closed buffer or a size that is not a multiple of sizeof(T).
template <class T>
::cuda::std::span<T> as_span(const Buffer& buffer) {
    static_assert(std::is_trivially_copyable_v<T>, "as_span needs a trivially copyable T");
    if (buffer.is_closed())
        throw InvalidArgumentError("cudacore::cccl::as_span: the buffer is closed or empty");
    if (buffer.size() % sizeof(T) != 0) {
        throw InvalidArgumentError("cudacore::cccl::as_span: " + buffer.description() +
                                   " is not a multiple of " + std::to_string(sizeof(T)) + " bytes");
    }
    return ::cuda::std::span<T>(static_cast<T*>(buffer.data()), buffer.size() / sizeof(T));
}

}  // namespace cudacore::cccl
