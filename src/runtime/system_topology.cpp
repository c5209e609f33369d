// The links between GPUs: NVML's common ancestor, NVLinks and peer status, the CUDA driver's
// peer attributes, and the whole machine's matrix.
#include "cudacore/system_topology.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/system.hpp"
#include "loader/driver_api.hpp"
#include "loader/nvml_api.hpp"

namespace cudacore::system {

PeerAttributes peer_attributes(const Device& from, const Device& to) {
    auto read = [&](CUdevice_P2PAttribute attribute, const char* name) {
        int value = 0;
        detail::check(detail::driver().cuDeviceGetP2PAttribute(&value, attribute, from.handle(), to.handle()),
                      "cuDeviceGetP2PAttribute", [&] {
                          return "device " + std::to_string(from.ordinal()) + " -> device " +
                                 std::to_string(to.ordinal()) + ", " + name;
                      });
        return value;
    };
    PeerAttributes out;
    out.access_supported =
        read(CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, "CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED") != 0;
    out.native_atomics = read(CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED,
                              "CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED") != 0;
    out.cuda_array_access = read(CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED,
                                 "CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED") != 0;
    out.performance_rank =
        read(CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK, "CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK");
    return out;
}

#ifdef CUDACORE_HAVE_NVML
namespace {

nvmlDevice_t pair_handle(const SystemDevice& device) {
    return static_cast<nvmlDevice_t>(device.handle());
}

std::string pair_object(const SystemDevice& a, const SystemDevice& b) {
    return "devices " + a.pci_bus_id() + " and " + b.pci_bus_id();
}

std::optional<bool> p2p(const SystemDevice& a, const SystemDevice& b, nvmlGpuP2PCapsIndex_t index) {
    const auto& api = detail::nvml();
    if (!api.nvmlDeviceGetP2PStatus) return std::nullopt;
    nvmlGpuP2PStatus_t status{};
    const nvmlReturn_t result = api.nvmlDeviceGetP2PStatus(pair_handle(a), pair_handle(b), index, &status);
    if (detail::nvml_not_supported(result)) return std::nullopt;
    detail::check_nvml(result, "nvmlDeviceGetP2PStatus", pair_object(a, b));
    return status == NVML_P2P_STATUS_OK;
}

// The CUDA ordinal of each bus id, matched against the devices CUDA sees.
std::vector<std::optional<int>> cuda_ordinals_of(const std::vector<std::string>& bus_ids) {
    std::vector<std::optional<int>> out(bus_ids.size());
    try {
        for (const Device& device : devices())
            if (auto index = find_pci_bus_id(bus_ids, device.pci_bus_id()))
                out[*index] = device.ordinal();
    } catch (const NoDriverError&) {
        // NVML without a usable CUDA driver: the matrix still stands, without ordinals.
    }
    return out;
}

}  // namespace

std::optional<TopologyLevel> common_ancestor(const SystemDevice& a, const SystemDevice& b) {
    const auto& api = detail::nvml();
    if (!api.nvmlDeviceGetTopologyCommonAncestor) return std::nullopt;
    nvmlGpuTopologyLevel_t level{};
    const nvmlReturn_t result =
        api.nvmlDeviceGetTopologyCommonAncestor(pair_handle(a), pair_handle(b), &level);
    if (detail::nvml_not_supported(result)) return std::nullopt;
    detail::check_nvml(result, "nvmlDeviceGetTopologyCommonAncestor", pair_object(a, b));
    switch (level) {
        case NVML_TOPOLOGY_INTERNAL: return TopologyLevel::same_board;
        case NVML_TOPOLOGY_SINGLE: return TopologyLevel::single_switch;
        case NVML_TOPOLOGY_MULTIPLE: return TopologyLevel::multiple_switch;
        case NVML_TOPOLOGY_HOSTBRIDGE: return TopologyLevel::host_bridge;
        case NVML_TOPOLOGY_NODE: return TopologyLevel::node;
        case NVML_TOPOLOGY_SYSTEM: return TopologyLevel::system;
    }
    return std::nullopt;  // a level newer than this header
}

PeerStatus peer_status(const SystemDevice& a, const SystemDevice& b) {
    PeerStatus out;
    out.read = p2p(a, b, NVML_P2P_CAPS_INDEX_READ);
    out.write = p2p(a, b, NVML_P2P_CAPS_INDEX_WRITE);
    out.atomics = p2p(a, b, NVML_P2P_CAPS_INDEX_ATOMICS);
    out.nvlink = p2p(a, b, NVML_P2P_CAPS_INDEX_NVLINK);
    return out;
}

Topology topology() {
    const std::vector<SystemDevice> gpus = SystemDevice::all();
    const std::size_t count = gpus.size();
    Topology out;
    for (const SystemDevice& gpu : gpus) {
        out.names.push_back(gpu.name());
        out.pci_bus_ids.push_back(gpu.pci_bus_id());
    }
    out.cuda_ordinals = cuda_ordinals_of(out.pci_bus_ids);
    out.links.assign(count, std::vector<GpuLink>(count));
    for (std::size_t i = 0; i < count; ++i) {
        const auto links = gpus[i].nvlinks();
        for (std::size_t j = 0; j < count; ++j) {
            if (i == j) continue;
            GpuLink& link = out.links[i][j];
            link.level = common_ancestor(gpus[i], gpus[j]);
            link.peer = peer_status(gpus[i], gpus[j]);
            if (!links) continue;
            // Links to j itself, and on an NVSwitch fabric every link to a switch, when NVML says
            // the pair talks over NVLink (nvidia-smi topo -m counts them the same way: NV18).
            const bool fabric = link.peer.nvlink.value_or(false);
            for (const NvLink& nvlink : *links)
                if (nvlink.active && (nvlink.remote_index == j || (fabric && nvlink.to_switch)))
                    ++link.nvlinks;
        }
    }
    return out;
}

#else  // built without nvml.h

namespace {
[[noreturn]] void topology_unavailable() {
    throw LoaderError("NVML (libnvidia-ml.so.1)", {}, "",
                      "cudacore was built without nvml.h (run scripts/setup.sh, which installs "
                      "the nvidia-nvml-dev package, and rebuild)");
}
}  // namespace

std::optional<TopologyLevel> common_ancestor(const SystemDevice&, const SystemDevice&) {
    topology_unavailable();
}
PeerStatus peer_status(const SystemDevice&, const SystemDevice&) { topology_unavailable(); }
Topology topology() { topology_unavailable(); }
#endif

}  // namespace cudacore::system
