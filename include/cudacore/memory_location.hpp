/// @file
/// MemoryLocation: where memory lives or should live (a device, the host, one host NUMA node),
/// for managed memory advice and prefetches. A plain value.
#pragma once

#include <cuda.h>

#include <optional>
#include <string>

namespace cudacore {

/// Where memory lives: a device, the host, or a host NUMA node.
struct MemoryLocation {
    /// CU_MEM_LOCATION_TYPE_DEVICE, _HOST or _HOST_NUMA.
    enum class Kind { device, host, host_numa };
    Kind kind = Kind::host;  ///< what `id` names
    int id = 0;  ///< device ordinal or NUMA node; 0 for the host

    /// Device `ordinal` (checked by the call that uses it).
    static MemoryLocation device(int ordinal) { return {Kind::device, ordinal}; }
    /// The host, any NUMA node.
    static MemoryLocation host() { return {Kind::host, 0}; }
    /// Host NUMA node `node`.
    static MemoryLocation host_numa(int node) { return {Kind::host_numa, node}; }

    /// The CUmemLocation for the driver.
    CUmemLocation to_driver() const noexcept;
    /// The location a CUmemLocation names; empty for none (INVALID) or one it cannot express.
    static std::optional<MemoryLocation> from_driver(CUmemLocationType type, int id) noexcept;

    /// "device 0", "host", "host NUMA node 1".
    std::string description() const;
    /// Equal when every field is.
    bool operator==(const MemoryLocation&) const = default;
};

/// "device", "host", "host_numa"; "MemoryLocation::Kind(N)" outside the enumeration.
std::string to_string(MemoryLocation::Kind kind);

}  // namespace cudacore
