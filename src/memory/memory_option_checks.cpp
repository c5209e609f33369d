#include "memory/memory_option_checks.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/virtual_memory_resource.hpp"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <set>

namespace cudacore::detail {

namespace {

struct HandleTypeInfo {
    unsigned bit;
    const char* name;
    CUdevice_attribute attribute;
    const char* attribute_name;
};

constexpr HandleTypeInfo kHandleTypes[] = {
    {CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, "posix_file_descriptor",
     CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED,
     "CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED"},
    {CU_MEM_HANDLE_TYPE_WIN32, "win32", CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_HANDLE_SUPPORTED,
     "CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_HANDLE_SUPPORTED"},
    {CU_MEM_HANDLE_TYPE_WIN32_KMT, "win32_kmt",
     CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED,
     "CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED"},
    {CU_MEM_HANDLE_TYPE_FABRIC, "fabric", CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED,
     "CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED"},
};

unsigned known_handle_bits() {
    unsigned bits = 0;
    for (const auto& type : kHandleTypes) bits |= type.bit;
    return bits;
}

void check_known(unsigned handle_types, const std::string& what) {
    const unsigned unknown = handle_types & ~known_handle_bits();
    if (unknown)
        throw InvalidArgumentError(what + ": unknown handle type bits 0x" +
                                   [&] {
                                       char text[16];
                                       std::snprintf(text, sizeof text, "%x", unknown);
                                       return std::string(text);
                                   }() +
                                   " (CUmemAllocationHandleType values only)");
}

}  // namespace

std::string handle_type_names(unsigned handle_types) {
    if (handle_types == 0) return "none";
    std::string out;
    for (const auto& type : kHandleTypes)
        if (handle_types & type.bit) out += (out.empty() ? "" : " | ") + std::string(type.name);
    if (handle_types & ~known_handle_bits()) out += (out.empty() ? "" : " | ") + std::string("unknown");
    return out;
}

void check_allocation_handle_types(unsigned handle_types, const AttributeQuery& attribute,
                                   const std::string& device) {
    check_known(handle_types, "handle_types of virtual memory on " + device);
    for (const auto& type : kHandleTypes) {
        if ((handle_types & type.bit) && attribute(type.attribute) == 0)
            throw InvalidArgumentError(std::string("handle type ") + type.name +
                                       " is not supported by " + device + " (" +
                                       type.attribute_name + " is 0)");
    }
}

void check_pool_handle_types(unsigned handle_types, const AttributeQuery& attribute,
                             const std::string& device) {
    check_known(handle_types, "handle_types of a memory pool on " + device);
    if (handle_types == 0) return;
    const unsigned supported =
        static_cast<unsigned>(attribute(CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES));
    const unsigned refused = handle_types & ~supported;
    if (refused)
        throw InvalidArgumentError("memory pool handle type " + handle_type_names(refused) +
                                   " is not supported by " + device +
                                   " (CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES is " +
                                   handle_type_names(supported) + ")");
}

void check_virtual_memory_options(const VirtualMemoryResourceOptions& options, int ordinal,
                                  const AttributeQuery& attribute) {
    const std::string device = "device " + std::to_string(ordinal);
    if (attribute(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED) == 0)
        throw InvalidArgumentError(
            "VirtualMemoryResource: " + device +
            " does not support virtual memory management "
            "(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED is 0)");
    if (options.gpu_direct_rdma &&
        attribute(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED) == 0)
        throw InvalidArgumentError(
            "VirtualMemoryResource: gpu_direct_rdma requested, but " + device +
            " does not support GPUDirect RDMA with virtual memory "
            "(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED is 0)");
    const int type = static_cast<int>(options.allocation_type);
    if (type < 0 || type > 1)
        throw InvalidArgumentError("VirtualMemoryResource: allocation_type " +
                                   std::to_string(type) +
                                   " is not a VirtualMemoryAllocationType (pinned or managed)");
    if (options.allocation_type == VirtualMemoryAllocationType::managed &&
        attribute(CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY) == 0)
        throw InvalidArgumentError("VirtualMemoryResource: allocation_type managed, but " + device +
                                   " does not support managed memory "
                                   "(CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY is 0)");
    check_allocation_handle_types(options.handle_types, attribute, device);
    if (options.owner_access == MemoryAccess::none)
        throw InvalidArgumentError("VirtualMemoryResource: owner_access none on " + device +
                                   " would leave the owning device unable to use its memory "
                                   "(read or read_write)");
    std::set<int> seen;
    for (const auto& peer : options.peer_access) {
        if (peer.device == ordinal)
            throw InvalidArgumentError("VirtualMemoryResource: peer_access lists the owning " +
                                       device + " (set owner_access instead)");
        if (peer.device < 0)
            throw InvalidArgumentError("VirtualMemoryResource: peer_access lists device " +
                                       std::to_string(peer.device));
        if (!seen.insert(peer.device).second)
            throw InvalidArgumentError("VirtualMemoryResource: peer_access lists device " +
                                       std::to_string(peer.device) + " twice (access " +
                                       to_string(peer.access) + ")");
    }
    if (options.address_alignment != 0 && !std::has_single_bit(options.address_alignment))
        throw InvalidArgumentError("VirtualMemoryResource: address_alignment " +
                                   std::to_string(options.address_alignment) +
                                   " is not a power of two");
}

std::size_t round_up(std::size_t size, std::size_t granularity) {
    if (granularity == 0) return size;
    return (size + granularity - 1) / granularity * granularity;
}

}  // namespace cudacore::detail
