/// @file
/// Sharing a PhysicalAllocation with another process as a shareable handle: a POSIX file
/// descriptor over an IpcChannel, or a fabric handle (plain bytes). The importer maps it into a
/// range of its own; the memory lives until every process has released and unmapped it.
/// Descriptor bytes: docs/design/ipc-descriptors.md. One thread at a time per channel.
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
    /// How it travels: CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR or CU_MEM_HANDLE_TYPE_FABRIC.
    unsigned handle_type = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    std::array<unsigned char, 64> fabric_handle{};  ///< CUmemFabricHandle (fabric only)

    /// The descriptor as bytes (see above); needs no driver.
    std::vector<std::byte> to_bytes() const;
    /// Reads what to_bytes wrote; SerializationError for anything else (see above).
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
    /// CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR (the default) or CU_MEM_HANDLE_TYPE_FABRIC; the
    /// allocation must have been created with it in PhysicalAllocationOptions::handle_types.
    unsigned handle_type = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
};

/// Whether `device` can make fabric handles, and the attribute's answer: the value of
/// CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED (0 when the driver does not know it).
/// Throws NoDriverError without a driver. Thread-safe.
int fabric_handles_supported(const Device& device);

/// Exports `allocation` (cuMemExportToShareableHandle). Throws InvalidArgumentError for a
/// closed allocation, a handle type other than the two above, or one it was not created with
/// (naming PhysicalAllocationOptions::handle_types and, for fabric, the device attribute's
/// value); DriverError naming the call when the driver refuses.
PhysicalAllocationHandle export_physical_allocation(const PhysicalAllocation& allocation,
                                                    const PhysicalAllocationExportOptions& options = {});
/// Imports an allocation another process exported (cuMemImportFromShareableHandle), on the
/// device whose UUID the descriptor names; the result is released here when its last holder
/// goes, and the file descriptor is closed. InvalidArgumentError when no device here has that
/// UUID or a POSIX handle comes without its file descriptor; DriverError when the driver refuses.
PhysicalAllocation import_physical_allocation(PhysicalAllocationHandle handle);

/// export_physical_allocation, then one message: the descriptor's bytes, with a duplicate of the
/// file descriptor for a POSIX handle. Throws what those throw.
void send_physical_allocation(const IpcChannel& channel, const PhysicalAllocation& allocation,
                              const PhysicalAllocationExportOptions& options = {});
/// Receives what send_physical_allocation sent and imports it (import_physical_allocation),
/// waiting at most `timeout` when given. IpcError when the peer is gone or a POSIX handle
/// arrives without its file descriptor; SerializationError for bad bytes.
PhysicalAllocation receive_physical_allocation(
    const IpcChannel& channel, std::optional<std::chrono::milliseconds> timeout = std::nullopt);

}  // namespace cudacore
