// Topology: the links between the GPUs of this machine as `nvidia-smi topo -m` prints them, the
// peer-to-peer status of each pair, and each GPU's NVLinks; checks that NVML and the CUDA driver
// agree on peer access. Skips without a GPU or NVML.
#include <cudacore/cudacore.hpp>

#include <cstdio>

int main() try {
    using namespace cudacore;
    if (!system::driver_available() || system::device_count() == 0 || !system::nvml_available()) {
        std::printf("skipped: no CUDA driver, GPU or NVML on this machine\n");
        return 0;
    }
    const system::Topology topology = system::topology();
    std::printf("%s\n", system::format_topology_matrix(topology).c_str());
    int problems = 0;
    for (const Device& a : Device::all()) {
        for (const Device& b : Device::all()) {
            if (a == b) continue;
            const auto i = system::find_pci_bus_id(topology.pci_bus_ids, a.pci_bus_id());
            const auto j = system::find_pci_bus_id(topology.pci_bus_ids, b.pci_bus_id());
            if (!i || !j) continue;
            const system::GpuLink& link = topology.links[*i][*j];
            const system::PeerAttributes cuda = system::peer_attributes(a, b);
            std::printf("device %d -> device %d: %s, peer access %s, native atomics %s, rank %d\n",
                        a.ordinal(), b.ordinal(), system::link_label(link).c_str(),
                        cuda.access_supported ? "yes" : "no", cuda.native_atomics ? "yes" : "no",
                        cuda.performance_rank);
            // NVML and the CUDA driver answer the same question two ways.
            if (link.peer.read && *link.peer.read != cuda.access_supported) ++problems;
        }
    }
    for (const system::SystemDevice& gpu : system::SystemDevice::all()) {
        const auto links = gpu.nvlinks();
        std::size_t active = 0;
        if (links)
            for (const auto& l : *links) active += l.active ? 1 : 0;
        std::printf("%s %s: NVLinks %s\n", gpu.pci_bus_id().c_str(), gpu.name().c_str(),
                    links ? (std::to_string(active) + " of " + std::to_string(links->size()) + " active").c_str()
                          : "not supported");
    }
    if (problems) std::printf("NVML and the CUDA driver disagree on peer access (%d pairs)\n", problems);
    return problems ? 1 : 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "topology: %s\n", e.what());
    return 1;
}
