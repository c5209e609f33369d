/// @file
/// VirtualMemoryResource: device memory from the virtual memory management calls, whose
/// allocations grow() without a copy. docs/design/memory-resources.md says how.
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

/// The kind of physical memory cuMemCreate makes (managed: where the driver allows).
enum class VirtualMemoryAllocationType { pinned, managed };

/// "pinned", "managed"; "VirtualMemoryAllocationType(N)" outside the enumeration.
std::string to_string(VirtualMemoryAllocationType type);

/// Options of a VirtualMemoryResource: location, handle types, peers, granularity.
struct VirtualMemoryResourceOptions {
    /// pinned or managed (InvalidArgumentError, DriverError where refused).
    VirtualMemoryAllocationType allocation_type = VirtualMemoryAllocationType::pinned;
    /// Handle types the memory may be exported as (CUmemAllocationHandleType bits).
    unsigned handle_types = CU_MEM_HANDLE_TYPE_NONE;
    /// Memory usable by GPUDirect RDMA.
    bool gpu_direct_rdma = false;
    /// Round sizes to the recommended granularity (fewer, larger pages) or the minimum one.
    bool recommended_granularity = true;
    /// Access of the owning device (read or read_write).
    MemoryAccess owner_access = MemoryAccess::read_write;
    /// Other devices granted access (peer access must be possible).
    std::vector<PeerMemoryAccess> peer_access{};
    /// Alignment of the reserved address ranges (a power of two); 0: the granularity.
    std::size_t address_alignment = 0;
};

/// Device memory mapped through the virtual memory API, which can grow keeping its contents.
/// Allocation is immediate; freeing waits for its stream. Holds its device's primary context.
/// Thread-safe. DriverError names the call and the sizes.
class VirtualMemoryResource final : public BuiltinMemoryResource<true, false> {
public:
    /// Throws InvalidArgumentError for options the device refuses, NoDriverError.
    explicit VirtualMemoryResource(const Device& device,
                                   const VirtualMemoryResourceOptions& options = {});
    ~VirtualMemoryResource() override;

    /// The options it was made with.
    const VirtualMemoryResourceOptions& options() const noexcept { return options_; }
    /// Bytes every size is rounded up to.
    std::size_t granularity() const noexcept { return granularity_; }

    /// Makes `buffer` `new_size` bytes large keeping its contents, in place or remapped at a new
    /// range after waiting for `stream`; returns the grown buffer and closes `buffer` and its
    /// copies. InvalidArgumentError (closed, foreign, smaller), DriverError (buffer unchanged).
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
    // grow()'s two ways, under mutex_: mapped right after (false when taken), or remapped.
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
