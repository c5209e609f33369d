/// @file
/// Memory resources: where a Buffer's memory comes from, allocated and freed in stream order;
/// every Buffer holds its resource. docs/design/memory-resources.md, "Writing a resource".
#pragma once

#include "cudacore/owning_handle.hpp"

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

/// Keeps `resource` until the process ends, so its later Buffers hold no reference of their own
/// (docs/design/buffers.md). InvalidArgumentError for null. Thread-safe.
void keep_until_exit(const std::shared_ptr<MemoryResource>& resource);

/// The base of every memory resource. Thread-safe, close() against allocations too.
class alignas(64) MemoryResource : public std::enable_shared_from_this<MemoryResource> {
public:
    virtual ~MemoryResource() = default;
    MemoryResource(const MemoryResource&) = delete;
    MemoryResource& operator=(const MemoryResource&) = delete;

    /// `size` bytes usable by work on `stream` after this call, freed on it when the last copy
    /// goes (0: an empty buffer). Throws InvalidArgumentError (closed, not owned by a shared_ptr)
    /// or DriverError (CUDA_ERROR_OUT_OF_MEMORY...).
    Buffer allocate(std::size_t size, const Stream& stream);

    /// Frees memory this resource allocated, ordered on `stream`. Throws DriverError.
    void deallocate(CUdeviceptr pointer, std::size_t size, const Stream& stream);

    /// Raw memory no Buffer tracks, freed with deallocate_pointer. Throws as allocate().
    CUdeviceptr allocate_pointer(std::size_t size, CUstream stream) {
        if (closed_.load(std::memory_order_acquire)) [[unlikely]]
            throw_closed("MemoryResource::allocate_pointer");
        return do_allocate(size, stream);
    }
    /// Frees allocate_pointer()'s memory through do_deallocate.
    void deallocate_pointer(CUdeviceptr pointer, std::size_t size, CUstream stream) {
        do_deallocate(pointer, size, stream);
    }

    /// Whether kernels on the device may dereference the memory.
    virtual bool is_device_accessible() const noexcept = 0;
    /// Whether code on the host may dereference the memory.
    virtual bool is_host_accessible() const noexcept = 0;
    /// Whether the memory is managed (unified) memory; false unless a resource says otherwise.
    virtual bool is_managed() const noexcept { return false; }
    /// The device the memory belongs to; -1 for none (pinned host memory).
    virtual int device_ordinal() const noexcept = 0;
    /// Device(device_ordinal()); InvalidArgumentError when it is -1.
    Device device() const;
    /// What the resource is, for error messages ("memory pool of device 0").
    virtual std::string description() const = 0;

    /// Closes the resource for every holder: allocate() then throws InvalidArgumentError; Buffers
    /// allocated before keep working. Throws do_close()'s errors (closed all the same), and
    /// InvalidArgumentError for a device's default resource. Closing again does nothing.
    void close();
    /// Whether close() was called.
    bool is_closed() const noexcept { return closed_.load(std::memory_order_acquire); }

protected:
    MemoryResource() = default;
    /// Allocates `size` bytes ordered on `stream`. Throws DriverError.
    virtual CUdeviceptr do_allocate(std::size_t size, CUstream stream) = 0;
    /// Frees what do_allocate() gave, ordered on `stream`. May throw.
    virtual void do_deallocate(CUdeviceptr pointer, std::size_t size, CUstream stream) = 0;
    /// What close() gives back, once; live buffers stay valid. Nothing by default.
    virtual void do_close() {}

    friend struct detail::BufferBox;

    /// The library's own (docs/design/buffers.md); null unless cudacore's resource sets it.
    std::shared_ptr<detail::LaunchStreams> free_streams_;

private:
    friend struct detail::MemoryResourceAccess;
    friend void keep_until_exit(const std::shared_ptr<MemoryResource>& resource);
    std::uint32_t described() const noexcept;
    std::atomic<bool> for_the_process_{false};
    // Never destroyed from now on: its buffers stop counting references to it.
    void keep_for_the_process() noexcept { for_the_process_.store(true, std::memory_order_release); }
    std::atomic<bool> closed_{false};
    bool device_default_ = false;  // set before the resource is shared, never changed
    [[noreturn]] void throw_closed(const char* operation) const;
    mutable std::atomic<std::uint32_t> description_bits_{0};
};

/// The overrides cudacore's resources of one device share: access and ordinal.
template <bool DeviceAccessible, bool HostAccessible, bool Managed = false>
class BuiltinMemoryResource : public MemoryResource {
public:
    /// DeviceAccessible.
    bool is_device_accessible() const noexcept override { return DeviceAccessible; }
    /// HostAccessible.
    bool is_host_accessible() const noexcept override { return HostAccessible; }
    /// Managed.
    bool is_managed() const noexcept override { return Managed; }
    /// The device's ordinal given at construction.
    int device_ordinal() const noexcept override { return ordinal_; }

protected:
    BuiltinMemoryResource() = default;
    /// A resource of device `ordinal`.
    explicit BuiltinMemoryResource(int ordinal) noexcept : ordinal_(ordinal) {}
    int ordinal_ = 0;  ///< the device the memory belongs to (allocates it)
};

}  // namespace cudacore
