/// @file
/// How the GPUs of a machine are connected (as `nvidia-smi topo -m` shows it), through NVML and
/// the CUDA driver. A reading a GPU or driver does not support is empty, never an exception;
/// without NVML the queries throw LoaderError. Thread-safe.
#pragma once

#include "cudacore/system_info.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace cudacore {
class Device;
}

namespace cudacore::system {

/// The closest point two GPUs share on the PCIe tree (nvmlGpuTopologyLevel_t), nearest first.
enum class TopologyLevel {
    same_board,       ///< one board (NVML_TOPOLOGY_INTERNAL; multi-GPU boards)
    single_switch,    ///< one PCIe switch between them (NVML_TOPOLOGY_SINGLE)
    multiple_switch,  ///< several PCIe switches, no host bridge (NVML_TOPOLOGY_MULTIPLE)
    host_bridge,      ///< the same PCIe host bridge (NVML_TOPOLOGY_HOSTBRIDGE)
    node,             ///< the same NUMA node, several host bridges (NVML_TOPOLOGY_NODE)
    system,           ///< across NUMA nodes, over the CPUs' interconnect (NVML_TOPOLOGY_SYSTEM)
};

/// "same_board", "single_switch", ...; "TopologyLevel(N)" outside the enumeration.
std::string to_string(TopologyLevel level);

/// "same board", "single switch", "multiple switch", "host bridge", "node", "system".
const char* topology_level_name(TopologyLevel level) noexcept;
/// nvidia-smi's legend: "BRD" (same board), "PIX", "PXB", "PHB", "NODE", "SYS".
const char* topology_level_code(TopologyLevel level) noexcept;

/// NVML's peer-to-peer status between two GPUs: true when OK; empty when not supported.
struct PeerStatus {
    std::optional<bool> read{};     ///< NVML_P2P_CAPS_INDEX_READ
    std::optional<bool> write{};    ///< NVML_P2P_CAPS_INDEX_WRITE
    std::optional<bool> atomics{};  ///< NVML_P2P_CAPS_INDEX_ATOMICS
    std::optional<bool> nvlink{};   ///< NVML_P2P_CAPS_INDEX_NVLINK
};

/// The CUDA driver's peer-to-peer attributes from one device towards another.
struct PeerAttributes {
    bool access_supported = false;    ///< CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED
    bool native_atomics = false;      ///< CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED
    bool cuda_array_access = false;   ///< CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED
    int performance_rank = 0;         ///< CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK (lower is better)
};

/// The link between two GPUs of a Topology.
struct GpuLink {
    std::optional<TopologyLevel> level{};  ///< common ancestor; empty when not supported
    /// Active NVLinks between the two (on an NVSwitch fabric, the first GPU's, as nvidia-smi).
    unsigned nvlinks = 0;
    PeerStatus peer{};                     ///< NVML's peer-to-peer status
};

/// Every GPU NVML sees and the link between each pair.
struct Topology {
    std::vector<std::string> names{};        ///< product name of each GPU, NVML index order
    std::vector<std::string> pci_bus_ids{};  ///< NVML's form ("00000000:18:00.0")
    /// The CUDA ordinal of each GPU; empty for one CUDA does not see.
    std::vector<std::optional<int>> cuda_ordinals{};
    /// links[i][j] for i != j; links[i][i] is default.
    std::vector<std::vector<GpuLink>> links{};
};

/// The closest common ancestor of two GPUs; empty when not supported. NvmlError otherwise.
std::optional<TopologyLevel> common_ancestor(const SystemDevice& a, const SystemDevice& b);
/// NVML's peer-to-peer status from a to b. Throws as common_ancestor() does.
PeerStatus peer_status(const SystemDevice& a, const SystemDevice& b);
/// The driver's peer attributes from `from` to `to`. DriverError names both.
PeerAttributes peer_attributes(const Device& from, const Device& to);
/// Reads the whole topology: every GPU, every pair. Throws as common_ancestor() does.
Topology topology();

/// The matrix cell for a pair: "NV18" for 18 NVLinks, else the level's code, "?" if unknown.
std::string link_label(const GpuLink& link);
/// The matrix as `nvidia-smi topo -m` prints it, with the legend.
std::string format_topology_matrix(const Topology& topology);
/// The position of `bus_id` in `bus_ids`, whatever the case or domain width; empty when absent.
std::optional<std::size_t> find_pci_bus_id(const std::vector<std::string>& bus_ids,
                                           const std::string& bus_id);

}  // namespace cudacore::system
