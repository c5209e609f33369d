/// @file
/// Sharing a PhysicalAllocation with another process (file descriptor or fabric handle); it lives
/// until every process let go. Bytes: docs/design/ipc-descriptors.md. One thread per channel.
#pragma once

#include "cudacore/ipc_channel.hpp"
#include "cudacore/ipc_descriptor.hpp"  // IpcId
#include "cudacore/physical_allocation.hpp"

#include <cuda.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace cudacore {

class Device;

/// What another process needs besides the file descriptor (for a fabric handle, everything).
struct PhysicalAllocationDescriptor {
    IpcId device_uuid{};            ///< the allocation's device (ordinals differ between processes)
    std::uint64_t size = 0;         ///< bytes
    std::int64_t exporter_pid = 0;  ///< the exporting process (getpid()), named in messages
    /// CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR or CU_MEM_HANDLE_TYPE_FABRIC.
    unsigned handle_type = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    std::array<unsigned char, 64> fabric_handle{};  ///< CUmemFabricHandle (fabric only)

    /// The descriptor as bytes; needs no driver.
    std::vector<std::byte> to_bytes() const;
    /// Reads what to_bytes wrote; SerializationError for anything else.
    static PhysicalAllocationDescriptor from_bytes(std::span<const std::byte> bytes);
    /// Equal when every field is.
    bool operator==(const PhysicalAllocationDescriptor&) const = default;
};

/// An exported allocation: its descriptor and, for a POSIX handle, its file descriptor (owned).
struct PhysicalAllocationHandle {
    FileDescriptor fd{};                        ///< invalid for a fabric handle
    PhysicalAllocationDescriptor descriptor{};  ///< the rest
};

/// How export_physical_allocation exports.
struct PhysicalAllocationExportOptions {
    /// POSIX file descriptor (the default) or fabric, as the allocation was created with.
    unsigned handle_type = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
};

/// CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED of `device` (0 when unknown). NoDriverError.
int fabric_handles_supported(const Device& device);

/// Exports `allocation`. InvalidArgumentError (closed, handle type), DriverError.
PhysicalAllocationHandle export_physical_allocation(const PhysicalAllocation& allocation,
                                                    const PhysicalAllocationExportOptions& options = {});
/// Imports an allocation another process exported. InvalidArgumentError, DriverError.
PhysicalAllocation import_physical_allocation(PhysicalAllocationHandle handle);

/// export_physical_allocation, then one message with the bytes (and the descriptor's duplicate).
void send_physical_allocation(const IpcChannel& channel, const PhysicalAllocation& allocation,
                              const PhysicalAllocationExportOptions& options = {});
/// Receives and imports what send_physical_allocation sent. IpcError, SerializationError.
PhysicalAllocation receive_physical_allocation(
    const IpcChannel& channel, std::optional<std::chrono::milliseconds> timeout = std::nullopt);

}  // namespace cudacore
