/// @file
/// Memory resources: where a Buffer's memory comes from and how it is given back. A
/// MemoryResource hands out Buffers (allocate) and frees them (deallocate), ordered on a stream;
/// Device::memory_resource() is a device's default. A resource is owned by a std::shared_ptr and
/// every Buffer it allocates holds it, so it outlives its memory. close() ends its use for new
/// memory (as cuda.core's does); Buffers allocated before stay valid. To write one: derive,
/// implement the accessibility queries, device_ordinal(), description(), do_allocate() and
/// do_deallocate() (which may throw: a Buffer's destructor ignores its errors). The queries
/// describe the resource for its whole life. docs/memory.md says more.
#pragma once

#include "cudacore/forward.hpp"

#include <cuda.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace cudacore {

class Buffer;
class Device;
class Stream;
class MemoryResource;

/// Keeps `resource` until the process ends: cudacore holds a reference to it that it never drops,
/// so the resource is never destroyed, and the Buffers it allocates from then on point at it
/// without each holding a reference of their own, as a device's default resource's buffers do.
/// For a long-lived allocator shared by many threads: every Buffer of a resource otherwise
/// changes the one reference count of that resource twice, and at 16 threads that shared count
/// costs about 1.2 µs per buffer, twenty times what CachingMemoryResource itself spends.
/// What the resource holds (a pool, cached blocks) is then given back only when the process ends
/// (CachingMemoryResource::release() still gives back what it caches); buffers alive at exit are
/// freed as the default resource's are. Buffers allocated before the call keep their own
/// reference. Calling it again, or for a device's default resource, does nothing more.
/// Throws InvalidArgumentError for a null pointer. Thread-safe, also against allocations.
void keep_until_exit(const std::shared_ptr<MemoryResource>& resource);

/// The base of every memory resource (this file's description). Thread-safe.
class alignas(64) MemoryResource : public std::enable_shared_from_this<MemoryResource> {
public:
    virtual ~MemoryResource() = default;
    MemoryResource(const MemoryResource&) = delete;
    MemoryResource& operator=(const MemoryResource&) = delete;

    /// `size` bytes, usable by work enqueued on `stream` after this call (stream-ordered resources)
    /// or at once (the others). The Buffer frees them on `stream` when its last copy goes, unless
    /// closed earlier. Size 0 gives an empty buffer of this resource (address 0, nothing
    /// allocated or freed), as in cuda.core. Throws InvalidArgumentError for a resource not owned
    /// by a shared_ptr, DriverError when the driver cannot allocate (CUDA_ERROR_OUT_OF_MEMORY...).
    Buffer allocate(std::size_t size, const Stream& stream);

    /// Frees memory this resource allocated, ordered on `stream`. Buffers call this themselves;
    /// it is public for memory taken out of a Buffer's control by the caller. Throws DriverError.
    void deallocate(CUdeviceptr pointer, std::size_t size, const Stream& stream);

    /// Raw memory that no Buffer tracks, ordered on `stream` like allocate(): the caller frees it
    /// with deallocate_pointer (CCCL adaptors use these, see cccl.hpp). Throws as allocate().
    CUdeviceptr allocate_pointer(std::size_t size, CUstream stream) {
        if (closed_.load(std::memory_order_acquire)) [[unlikely]]
            throw_closed("MemoryResource::allocate_pointer");
        return do_allocate(size, stream);
    }
    /// deallocate and deallocate_pointer go through do_deallocate, with whatever checks it makes
    /// (a resource wrapping another calls them from its own do_deallocate).
    void deallocate_pointer(CUdeviceptr pointer, std::size_t size, CUstream stream) {
        do_deallocate(pointer, size, stream);
    }

    /// Whether kernels on the device / code on the host may dereference the memory.
    virtual bool is_device_accessible() const noexcept = 0;
    /// Whether code on the host may dereference the memory.
    virtual bool is_host_accessible() const noexcept = 0;
    /// Whether the memory is managed (unified) memory; false unless a resource says otherwise.
    virtual bool is_managed() const noexcept { return false; }
    /// The device the memory belongs to (managed memory: the device whose context allocates it);
    /// -1 for memory bound to no device (pinned host memory), for which device() throws
    /// InvalidArgumentError.
    virtual int device_ordinal() const noexcept = 0;
    /// Device(device_ordinal()); InvalidArgumentError when it is -1.
    Device device() const;
    /// What the resource is, for error messages ("memory pool of device 0").
    virtual std::string description() const = 0;

    /// Closes the resource for every holder: allocate() and allocate_pointer() then throw
    /// InvalidArgumentError naming the call and the resource; deallocate() and the Buffers
    /// allocated before keep working. Then gives back what do_close() releases (a pool's unused
    /// reserve, a cache's blocks), whose errors it throws (DriverError; closed all the same). A
    /// device's default resource refuses it (InvalidArgumentError: the process shares it).
    /// Closing again does nothing. Thread-safe, also against allocations on other threads.
    void close();
    /// Whether close() was called. Never throws.
    bool is_closed() const noexcept { return closed_.load(std::memory_order_acquire); }

protected:
    MemoryResource() = default;
    /// Allocates `size` bytes ordered on `stream` (what allocate() calls). Throws DriverError.
    virtual CUdeviceptr do_allocate(std::size_t size, CUstream stream) = 0;
    /// Frees what do_allocate() gave, ordered on `stream`. May throw (see the file's description).
    virtual void do_deallocate(CUdeviceptr pointer, std::size_t size, CUstream stream) = 0;
    /// What close() gives back, called once, after the resource is marked closed; live buffers
    /// must stay valid. Nothing by default. May throw (close() passes the error on).
    virtual void do_close() {}

    friend struct detail::BufferBox;

    /// The library's own (docs/design/buffers.md, "Pools destroyed after their frees"); null
    /// unless a resource of cudacore's sets it.
    std::shared_ptr<detail::LaunchStreams> free_streams_;

private:
    friend void detail::keep_for_the_process(MemoryResource& resource) noexcept;
    friend void keep_until_exit(const std::shared_ptr<MemoryResource>& resource);
    friend void detail::mark_device_default(MemoryResource& resource) noexcept;
    // The description asked once, and the kept-for-the-process mark (docs/design/buffers.md).
    std::uint32_t described() const noexcept;
    std::atomic<bool> for_the_process_{false};
    std::atomic<bool> closed_{false};
    bool device_default_ = false;  // set before the resource is shared, never changed
    // InvalidArgumentError "OPERATION: DESCRIPTION is closed".
    [[noreturn]] void throw_closed(const char* operation) const;
    mutable std::atomic<std::uint32_t> description_bits_{0};
};

/// The overrides cudacore's resources of one device share: the memory's access, said by the type,
/// and the device's ordinal, given at construction. Thread-safe.
template <bool DeviceAccessible, bool HostAccessible, bool Managed = false>
class BuiltinMemoryResource : public MemoryResource {
public:
    /// DeviceAccessible. Never throws.
    bool is_device_accessible() const noexcept override { return DeviceAccessible; }
    /// HostAccessible. Never throws.
    bool is_host_accessible() const noexcept override { return HostAccessible; }
    /// Managed. Never throws.
    bool is_managed() const noexcept override { return Managed; }
    /// The device's ordinal given at construction. Never throws.
    int device_ordinal() const noexcept override { return ordinal_; }

protected:
    BuiltinMemoryResource() = default;
    /// A resource of device `ordinal`.
    explicit BuiltinMemoryResource(int ordinal) noexcept : ordinal_(ordinal) {}
    int ordinal_ = 0;  ///< the device the memory belongs to (allocates it)
};

}  // namespace cudacore
