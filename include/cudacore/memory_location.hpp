/// @file
/// MemoryLocation: where memory lives or should live (a device, the host, one host NUMA node), as
/// used by managed memory advice and prefetches. A plain value; to_driver() gives the
/// CUmemLocation the driver takes, from_driver() reads one back.
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

    /// Device `ordinal` (not checked here: the call that uses it does).
    static MemoryLocation device(int ordinal) { return {Kind::device, ordinal}; }
    /// The host, any NUMA node.
    static MemoryLocation host() { return {Kind::host, 0}; }
    /// Host NUMA node `node`.
    static MemoryLocation host_numa(int node) { return {Kind::host_numa, node}; }

    /// The CUmemLocation for the driver (type from `kind`, id as is; 0 for the host).
    CUmemLocation to_driver() const noexcept;
    /// Empty for CU_MEM_LOCATION_TYPE_INVALID (no location, e.g. never prefetched) and for types
    /// this value cannot express.
    static std::optional<MemoryLocation> from_driver(CUmemLocationType type, int id) noexcept;

    /// "device 0", "host", "host NUMA node 1".
    std::string description() const;
    /// Equal when every field is.
    bool operator==(const MemoryLocation&) const = default;
};

/// "device", "host", "host_numa"; "MemoryLocation::Kind(N)" for a value outside the enumeration.
/// Never throws beyond std::bad_alloc.
std::string to_string(MemoryLocation::Kind kind);

}  // namespace cudacore
