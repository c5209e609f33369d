// Checks of memory options that need only device attributes, separate from the driver so that
// they are testable without one: `attribute` answers cuDeviceGetAttribute for the device
// concerned. Each throws InvalidArgumentError naming the option, the device and the attribute.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <functional>
#include <string>

namespace cudacore {
struct VirtualMemoryResourceOptions;
}

namespace cudacore::detail {

using AttributeQuery = std::function<int(CUdevice_attribute)>;

// "posix_file_descriptor | fabric", "none" for 0.
std::string handle_type_names(unsigned handle_types);

// Handle types a VMM allocation (cuMemCreate) asks for: each must be one the driver knows and the
// device supports (CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_*_SUPPORTED).
void check_allocation_handle_types(unsigned handle_types, const AttributeQuery& attribute,
                                   const std::string& device);

// Handle types a memory pool asks for: within CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES.
void check_pool_handle_types(unsigned handle_types, const AttributeQuery& attribute,
                             const std::string& device);

// Everything in VirtualMemoryResourceOptions that needs no driver call beyond attributes:
// virtual memory management supported, RDMA supported when asked, handle types, access flags,
// peers (not the owner, not twice), alignment (0 or a power of two).
void check_virtual_memory_options(const VirtualMemoryResourceOptions& options, int ordinal,
                                  const AttributeQuery& attribute);

// `size` rounded up to a multiple of `granularity` (a power of two or any positive value).
std::size_t round_up(std::size_t size, std::size_t granularity);

}  // namespace cudacore::detail
