/// @file
/// VirtualMemoryResource: device memory built from the virtual memory management calls (a
/// reserved range, physical memory mapped there, access granted per device), whose allocations
/// grow() in place or by remapping the same memory at a larger range, without a copy. Allocation
/// is immediate, not stream-ordered; freeing waits for the stream it is ordered on. Create it with
/// std::make_shared; every Buffer holds it, and it holds the primary context of its device.
/// Thread-safe. Options the device cannot honour throw InvalidArgumentError at construction;
/// driver failures throw DriverError naming the call and the sizes. More:
/// docs/design/memory-resources.md.
#pragma once

#include "cudacore/buffer.hpp"  // allocate() returns one
#include "cudacore/context.hpp"
#include "cudacore/memory_access.hpp"
#include "cudacore/memory_resource.hpp"

#include <cuda.h>

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <vector>
#include <string>

namespace cudacore {

class Device;
class Stream;


/// A device given access to a VirtualMemoryResource's memory, and how.
struct PeerMemoryAccess {
    int device = 0;  ///< ordinal
    MemoryAccess access = MemoryAccess::read_write;  ///< what it may do (cuMemSetAccess flags)
};

/// The kind of physical memory cuMemCreate makes (CUmemAllocationType), as cuda.core's
/// VirtualMemoryResourceOptions.allocation_type: pinned device memory, or managed memory (which
/// the driver may migrate; not every driver and device allows it through cuMemCreate).
enum class VirtualMemoryAllocationType { pinned, managed };

/// "pinned", "managed"; "VirtualMemoryAllocationType(N)" for a value outside the enumeration. Never
/// throws beyond std::bad_alloc.
std::string to_string(VirtualMemoryAllocationType type);

/// Options of a VirtualMemoryResource: location, handle types, peers, granularity.
struct VirtualMemoryResourceOptions {
    /// pinned (the default) or managed. Managed needs a device with managed memory
    /// (CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, else InvalidArgumentError at construction naming it);
    /// where the driver still refuses managed physical memory, construction (its granularity
    /// query) or allocate (cuMemCreate) throws DriverError naming the call and "managed virtual
    /// memory of device N" (cuda.core's vmm_memory_example expects this failure on some
    /// systems). Buffers of a managed resource report is_managed(); access is granted to the
    /// devices only, as for pinned memory (is_host_accessible() stays false).
    VirtualMemoryAllocationType allocation_type = VirtualMemoryAllocationType::pinned;
    /// Handle types the physical memory may be exported as (CUmemAllocationHandleType bits, e.g.
    /// CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR); each must be supported by the device.
    unsigned handle_types = CU_MEM_HANDLE_TYPE_NONE;
    /// Memory usable by GPUDirect RDMA (needs CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED).
    bool gpu_direct_rdma = false;
    /// Round sizes to the recommended granularity (fewer, larger pages) or the minimum one.
    bool recommended_granularity = true;
    /// Access of the device that owns the memory (read or read_write; none is refused).
    MemoryAccess owner_access = MemoryAccess::read_write;
    /// Other devices granted access (peer access must be possible: cuDeviceCanAccessPeer).
    std::vector<PeerMemoryAccess> peer_access{};
    /// Alignment of the reserved address ranges; 0 means the granularity. A power of two.
    std::size_t address_alignment = 0;
};

/// Device memory mapped through the virtual memory API, which can grow keeping its contents.
class VirtualMemoryResource final : public BuiltinMemoryResource<true, false> {
public:
    /// Throws InvalidArgumentError for options the device refuses (see above), NoDriverError.
    explicit VirtualMemoryResource(const Device& device,
                                   const VirtualMemoryResourceOptions& options = {});
    ~VirtualMemoryResource() override;

    /// The options it was made with.
    const VirtualMemoryResourceOptions& options() const noexcept { return options_; }
    /// Bytes every size is rounded up to.
    std::size_t granularity() const noexcept { return granularity_; }

    /// Makes `buffer` (allocated by this resource) `new_size` bytes large, keeping its contents,
    /// and returns the grown buffer; `buffer` and its copies are closed (the memory now belongs to
    /// the result). When the address range after the buffer is free the address stays the same;
    /// otherwise the physical memory is mapped at a new range, after waiting for `stream` (work on
    /// it may still use the old addresses). A new_size within the mapped size maps nothing new.
    /// Throws InvalidArgumentError for a closed buffer, one from another resource, or a smaller
    /// size; DriverError when the driver refuses (the buffer is then unchanged).
    Buffer grow(Buffer& buffer, std::size_t new_size, const Stream& stream);

    bool is_managed() const noexcept override {
        return options_.allocation_type == VirtualMemoryAllocationType::managed;
    }
    std::string description() const override;

protected:
    CUdeviceptr do_allocate(std::size_t size, CUstream stream) override;
    void do_deallocate(CUdeviceptr pointer, std::size_t size, CUstream stream) override;

private:
    struct Piece {
        CUmemGenericAllocationHandle handle = 0;
        std::size_t offset = 0;
        std::size_t size = 0;
    };
    struct Range {
        CUdeviceptr address = 0;
        std::size_t size = 0;
    };
    struct Allocation {
        std::vector<Range> reserved{};  ///< contiguous, in address order
        std::vector<Piece> pieces{};    ///< mapped from the allocation's start, in order
        std::size_t mapped = 0;
    };

    CUmemGenericAllocationHandle create_physical(std::size_t size) const;
    void set_access(CUdeviceptr address, std::size_t size) const;
    // grow()'s two ways, under mutex_: `handle` (`extra` bytes) mapped right after the
    // allocation (false, nothing changed, when that range is taken), or everything remapped into
    // a new range (returns its address).
    bool grow_in_place(Allocation& allocation, CUmemGenericAllocationHandle handle, std::size_t extra);
    CUdeviceptr grow_by_remapping(CUdeviceptr old_address, CUmemGenericAllocationHandle handle,
                                  std::size_t extra, const Buffer& buffer, const Stream& stream);

    Context context_;
    VirtualMemoryResourceOptions options_;
    CUmemAllocationProp properties_{};
    std::vector<CUmemAccessDesc> access_;
    std::size_t granularity_ = 0;
    std::size_t alignment_ = 0;
    mutable std::mutex mutex_;
    std::map<CUdeviceptr, Allocation> allocations_;
};

}  // namespace cudacore
