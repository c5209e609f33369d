#include "cudacore/virtual_memory_resource.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/stream.hpp"
#include "memory/buffer_box.hpp"
#include "support/box_access.hpp"
#include "support/cudacore_trace.hpp"
#include "memory/memory_option_checks.hpp"
#include "runtime/release/release.hpp"
#include "support/enum_text.hpp"

namespace cudacore {

namespace {

CUmemAccess_flags access_flags(MemoryAccess access) {
    switch (access) {
        case MemoryAccess::none: return CU_MEM_ACCESS_FLAGS_PROT_NONE;
        case MemoryAccess::read: return CU_MEM_ACCESS_FLAGS_PROT_READ;
        case MemoryAccess::read_write: return CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    }
    return CU_MEM_ACCESS_FLAGS_PROT_NONE;
}

CUmemAccessDesc access_of(int ordinal, MemoryAccess access) {
    CUmemAccessDesc desc{};
    desc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    desc.location.id = ordinal;
    desc.flags = access_flags(access);
    return desc;
}

std::string bytes_at(std::size_t size, CUdeviceptr address) {
    char text[64];
    std::snprintf(text, sizeof text, "%zu bytes at 0x%llx", size,
                  static_cast<unsigned long long>(address));
    return text;
}

}  // namespace

VirtualMemoryResource::VirtualMemoryResource(const Device& device,
                                             const VirtualMemoryResourceOptions& options)
    : BuiltinMemoryResource(device.ordinal()),
      context_(detail::BoxAccess::make<Context>(detail::primary_context(device.ordinal()))),
      options_(options) {
    detail::check_virtual_memory_options(
        options_, ordinal_, [&](CUdevice_attribute attribute) { return device.attribute(attribute); });
    const auto& api = detail::driver();
    for (const auto& peer : options_.peer_access) {
        Device other(peer.device);  // throws for a device that does not exist
        int can = 0;
        detail::check(api.cuDeviceCanAccessPeer(&can, other.handle(), device.handle()),
                      "cuDeviceCanAccessPeer", description());
        if (!can)
            throw InvalidArgumentError("VirtualMemoryResource: device " +
                                       std::to_string(peer.device) + " cannot access memory of " +
                                       description() + " (cuDeviceCanAccessPeer is 0)");
    }
    properties_.type = options_.allocation_type == VirtualMemoryAllocationType::managed
                           ? CU_MEM_ALLOCATION_TYPE_MANAGED
                           : CU_MEM_ALLOCATION_TYPE_PINNED;
    properties_.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    properties_.location.id = device.handle();
    properties_.requestedHandleTypes = static_cast<CUmemAllocationHandleType>(options_.handle_types);
    properties_.allocFlags.gpuDirectRDMACapable = options_.gpu_direct_rdma ? 1 : 0;
    detail::check(api.cuMemGetAllocationGranularity(
                      &granularity_, &properties_,
                      options_.recommended_granularity ? CU_MEM_ALLOC_GRANULARITY_RECOMMENDED
                                                       : CU_MEM_ALLOC_GRANULARITY_MINIMUM),
                  "cuMemGetAllocationGranularity", description());
    alignment_ = options_.address_alignment ? options_.address_alignment : granularity_;
    access_.push_back(access_of(ordinal_, options_.owner_access));
    for (const auto& peer : options_.peer_access) access_.push_back(access_of(peer.device, peer.access));
}

// Every buffer holds the resource, so no allocation is left when it goes.
VirtualMemoryResource::~VirtualMemoryResource() = default;

std::string VirtualMemoryResource::description() const {
    return std::string(is_managed() ? "managed " : "") + "virtual memory of device " +
           std::to_string(ordinal_);
}

CUmemGenericAllocationHandle VirtualMemoryResource::create_physical(std::size_t size) const {
    CUmemGenericAllocationHandle handle = 0;
    detail::check(detail::driver().cuMemCreate(&handle, size, &properties_, 0), "cuMemCreate",
                  [&] { return std::to_string(size) + " bytes of " + description(); });
    return handle;
}

void VirtualMemoryResource::set_access(CUdeviceptr address, std::size_t size) const {
    detail::check(detail::driver().cuMemSetAccess(address, size, access_.data(), access_.size()),
                  "cuMemSetAccess", [&] { return bytes_at(size, address) + " of " + description(); });
}

CUdeviceptr VirtualMemoryResource::do_allocate(std::size_t size, CUstream) {
    const auto& api = detail::driver();
    detail::ContextScope scope(*detail::box_of(context_));
    const std::size_t mapped = detail::round_up(size, granularity_);
    CUdeviceptr address = 0;
    detail::check(api.cuMemAddressReserve(&address, mapped, alignment_, 0, 0),
                  "cuMemAddressReserve",
                  [&] { return std::to_string(mapped) + " bytes of address space for " + description(); });
    CUmemGenericAllocationHandle handle = 0;
    bool is_mapped = false;
    try {
        handle = create_physical(mapped);
        detail::check(api.cuMemMap(address, mapped, 0, handle, 0), "cuMemMap",
                      [&] { return bytes_at(mapped, address) + " of " + description(); });
        is_mapped = true;
        set_access(address, mapped);
    } catch (...) {
        if (is_mapped) api.cuMemUnmap(address, mapped);
        if (handle) api.cuMemRelease(handle);
        api.cuMemAddressFree(address, mapped);
        throw;
    }
    Allocation allocation;
    allocation.reserved.push_back({address, mapped});
    allocation.pieces.push_back({handle, 0, mapped});
    allocation.mapped = mapped;
    std::lock_guard lock(mutex_);
    allocations_.emplace(address, std::move(allocation));
    return address;
}

void VirtualMemoryResource::do_deallocate(CUdeviceptr pointer, std::size_t size, CUstream stream) {
    Allocation allocation;
    {
        std::lock_guard lock(mutex_);
        auto found = allocations_.find(pointer);
        if (found == allocations_.end())
            throw InvalidArgumentError("VirtualMemoryResource::deallocate: " +
                                       bytes_at(size, pointer) + " was not allocated by " +
                                       description());
        allocation = std::move(found->second);
        allocations_.erase(found);
    }
    const detail::DriverApi* api = detail::driver_for_release(*detail::box_of(context_));
    if (!api) return;
    detail::ContextScope scope(*detail::box_of(context_));
    // Unmap, release the physical memory, free the address range: the order the driver needs.
    // Every step runs even when one fails; the first failure is reported.
    CUresult first = api->cuStreamSynchronize(stream);
    const char* first_call = "cuStreamSynchronize";
    auto note = [&](CUresult status, const char* call) {
        if (status != CUDA_SUCCESS && first == CUDA_SUCCESS) {
            first = status;
            first_call = call;
        }
    };
    for (const auto& piece : allocation.pieces)
        note(api->cuMemUnmap(pointer + piece.offset, piece.size), "cuMemUnmap");
    for (const auto& piece : allocation.pieces) note(api->cuMemRelease(piece.handle), "cuMemRelease");
    for (const auto& range : allocation.reserved)
        note(api->cuMemAddressFree(range.address, range.size), "cuMemAddressFree");
    detail::check(first, first_call, [&] { return bytes_at(size, pointer) + " of " + description(); });
}

bool VirtualMemoryResource::grow_in_place(Allocation& allocation, CUmemGenericAllocationHandle handle,
                                          std::size_t extra) {
    const auto& api = detail::driver();
    const CUdeviceptr reserved_end = allocation.reserved.back().address + allocation.reserved.back().size;
    // The range right after the allocation, asked for at that fixed address.
    CUdeviceptr next = 0;
    const CUresult reserved = api.cuMemAddressReserve(&next, extra, 0, reserved_end, 0);
    if (reserved != CUDA_SUCCESS || next != reserved_end || api.cuMemMap(next, extra, 0, handle, 0) != CUDA_SUCCESS) {
        if (reserved == CUDA_SUCCESS && next != 0) api.cuMemAddressFree(next, extra);
        return false;
    }
    try {
        set_access(next, extra);
    } catch (...) {
        api.cuMemUnmap(next, extra);
        api.cuMemAddressFree(next, extra);
        api.cuMemRelease(handle);
        throw;
    }
    allocation.reserved.push_back({next, extra});
    allocation.pieces.push_back({handle, allocation.mapped, extra});
    allocation.mapped += extra;
    return true;
}

CUdeviceptr VirtualMemoryResource::grow_by_remapping(CUdeviceptr old_address, CUmemGenericAllocationHandle handle,
                                                     std::size_t extra, const Buffer& buffer,
                                                     const Stream& stream) {
    const auto& api = detail::driver();
    auto found = allocations_.find(old_address);
    Allocation& allocation = found->second;
    const std::size_t new_mapped = allocation.mapped + extra;
    // A new range holding the old physical memory, then the new piece.
    CUdeviceptr moved = 0;
    std::vector<std::size_t> done;  // offsets mapped at `moved`
    auto undo = [&] {
        for (std::size_t i = 0; i < done.size(); ++i) {
            const std::size_t piece_size = i < allocation.pieces.size() ? allocation.pieces[i].size : extra;
            api.cuMemUnmap(moved + done[i], piece_size);
        }
        if (moved) api.cuMemAddressFree(moved, new_mapped);
        api.cuMemRelease(handle);
    };
    try {
        detail::check(api.cuMemAddressReserve(&moved, new_mapped, alignment_, 0, 0), "cuMemAddressReserve", [&] {
            return std::to_string(new_mapped) + " bytes of address space to grow " + buffer.description();
        });
        for (const auto& piece : allocation.pieces) {
            detail::check(api.cuMemMap(moved + piece.offset, piece.size, 0, piece.handle, 0), "cuMemMap", [&] {
                return bytes_at(piece.size, moved + piece.offset) + " (remapping " + buffer.description() + ")";
            });
            done.push_back(piece.offset);
        }
        detail::check(api.cuMemMap(moved + allocation.mapped, extra, 0, handle, 0), "cuMemMap", [&] {
            return bytes_at(extra, moved + allocation.mapped) + " (growing " + buffer.description() + ")";
        });
        done.push_back(allocation.mapped);
        set_access(moved, new_mapped);
        // Work queued on the stream may still use the old addresses.
        detail::check(api.cuStreamSynchronize(stream.handle()), "cuStreamSynchronize",
                      [&] { return "growing " + buffer.description(); });
    } catch (...) {
        undo();
        throw;
    }
    for (const auto& piece : allocation.pieces) api.cuMemUnmap(old_address + piece.offset, piece.size);
    for (const auto& range : allocation.reserved) api.cuMemAddressFree(range.address, range.size);
    Allocation moved_allocation;
    moved_allocation.reserved.push_back({moved, new_mapped});
    moved_allocation.pieces = std::move(allocation.pieces);
    moved_allocation.pieces.push_back({handle, allocation.mapped, extra});
    moved_allocation.mapped = new_mapped;
    allocations_.erase(found);
    allocations_.emplace(moved, std::move(moved_allocation));
    return moved;
}

Buffer VirtualMemoryResource::grow(Buffer& buffer, std::size_t new_size, const Stream& stream) {
    const detail::CudacoreRange range(tracing::CudacoreCategory::memory, "virtual buffer grow", new_size);
    stream.check_open("VirtualMemoryResource::grow");
    if (buffer.is_closed())
        throw InvalidArgumentError("VirtualMemoryResource::grow: " + buffer.description() +
                                   " is closed");
    if (buffer.memory_resource().get() != this || !buffer.owns_memory())
        throw InvalidArgumentError("VirtualMemoryResource::grow: " + buffer.description() +
                                   " was not allocated by " + description());
    if (new_size < buffer.size())
        throw InvalidArgumentError("VirtualMemoryResource::grow: " + std::to_string(new_size) +
                                   " bytes is smaller than " + buffer.description());
    detail::driver();  // NoDriverError before anything else
    detail::ContextScope scope(*detail::box_of(context_));
    const CUdeviceptr old_address = buffer.handle();
    std::lock_guard lock(mutex_);
    auto found = allocations_.find(old_address);
    if (found == allocations_.end())
        throw InvalidArgumentError("VirtualMemoryResource::grow: " + buffer.description() +
                                   " is not tracked by " + description());
    Allocation& allocation = found->second;
    const std::size_t new_mapped = detail::round_up(new_size, granularity_);
    CUdeviceptr new_address = old_address;
    if (new_mapped > allocation.mapped) {
        const std::size_t extra = new_mapped - allocation.mapped;
        const CUmemGenericAllocationHandle handle = create_physical(extra);
        if (!grow_in_place(allocation, handle, extra))
            new_address = grow_by_remapping(old_address, handle, extra, buffer, stream);
    }
    // The memory changes hands: the old box (and every copy of it) is closed without freeing.
    detail::BufferBox* old_box = detail::box_of(buffer);
    detail::BufferBoxPtr box;
    box->handle = new_address;
    box->size = new_size;
    box->device_ordinal = ordinal_;
    box->device_accessible = true;
    box->host_accessible = false;
    box->free_stream = old_box->free_stream;
    box->resource = old_box->resource;
    // Tracked, so that the last copy of the result frees the memory; the old box is closed.
    box->track();
    old_box->hand_over();
    return detail::make_buffer(box);
}

}  // namespace cudacore

namespace cudacore {

std::string to_string(VirtualMemoryAllocationType type) {
    static constexpr detail::EnumText<VirtualMemoryAllocationType> names[] = {
        {VirtualMemoryAllocationType::pinned, "pinned"},
        {VirtualMemoryAllocationType::managed, "managed"},
    };
    return detail::enum_text(type, names, "VirtualMemoryAllocationType");
}

}  // namespace cudacore
