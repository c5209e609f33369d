// The driver-free half of system_topology.hpp: level names, the matrix, bus id matching.
#include "cudacore/system_topology.hpp"

#include "support/enum_text.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace cudacore::system {

const char* topology_level_name(TopologyLevel level) noexcept {
    switch (level) {
        case TopologyLevel::same_board: return "same board";
        case TopologyLevel::single_switch: return "single switch";
        case TopologyLevel::multiple_switch: return "multiple switch";
        case TopologyLevel::host_bridge: return "host bridge";
        case TopologyLevel::node: return "node";
        case TopologyLevel::system: return "system";
    }
    return "unknown";
}

const char* topology_level_code(TopologyLevel level) noexcept {
    switch (level) {
        case TopologyLevel::same_board: return "BRD";
        case TopologyLevel::single_switch: return "PIX";
        case TopologyLevel::multiple_switch: return "PXB";
        case TopologyLevel::host_bridge: return "PHB";
        case TopologyLevel::node: return "NODE";
        case TopologyLevel::system: return "SYS";
    }
    return "?";
}

std::string link_label(const GpuLink& link) {
    if (link.nvlinks > 0) return "NV" + std::to_string(link.nvlinks);
    return link.level ? topology_level_code(*link.level) : "?";
}

std::string format_topology_matrix(const Topology& topology) {
    const std::size_t count = topology.links.size();
    std::ostringstream out;
    auto cell = [&](const std::string& text) {
        out << text << std::string(text.size() < 8 ? 8 - text.size() : 1, ' ');
    };
    cell("");
    for (std::size_t j = 0; j < count; ++j) cell("GPU" + std::to_string(j));
    out << "CUDA ordinal\n";
    for (std::size_t i = 0; i < count; ++i) {
        cell("GPU" + std::to_string(i));
        for (std::size_t j = 0; j < count; ++j) cell(i == j ? "X" : link_label(topology.links[i][j]));
        const bool known = i < topology.cuda_ordinals.size() && topology.cuda_ordinals[i];
        out << (known ? std::to_string(*topology.cuda_ordinals[i]) : "-") << "\n";
    }
    out << "\nLegend:\n"
           "  X    = self\n"
           "  SYS  = across NUMA nodes (the CPUs' interconnect)\n"
           "  NODE = one NUMA node, several PCIe host bridges\n"
           "  PHB  = one PCIe host bridge\n"
           "  PXB  = several PCIe switches, no host bridge\n"
           "  PIX  = one PCIe switch\n"
           "  BRD  = one board\n"
           "  NV#  = # active NVLinks\n"
           "  ?    = not supported\n";
    return out.str();
}

namespace {

// "0000:18:00.0" and "00000000:18:00.0" name one device: compare the domain as a number.
std::string canonical_bus_id(const std::string& bus_id) {
    std::string lower = bus_id;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    const auto colon = lower.find(':');
    if (colon == std::string::npos || lower.find(':', colon + 1) == std::string::npos) return lower;
    const auto first = lower.find_first_not_of('0');
    const std::string domain = first < colon ? lower.substr(first, colon - first) : "0";
    return domain + lower.substr(colon);
}

}  // namespace

std::optional<std::size_t> find_pci_bus_id(const std::vector<std::string>& bus_ids,
                                           const std::string& bus_id) {
    const std::string wanted = canonical_bus_id(bus_id);
    for (std::size_t i = 0; i < bus_ids.size(); ++i)
        if (canonical_bus_id(bus_ids[i]) == wanted) return i;
    return std::nullopt;
}

}  // namespace cudacore::system

namespace cudacore::system {

std::string to_string(TopologyLevel level) {
    static constexpr detail::EnumText<TopologyLevel> names[] = {
        {TopologyLevel::same_board, "same_board"},
        {TopologyLevel::single_switch, "single_switch"},
        {TopologyLevel::multiple_switch, "multiple_switch"},
        {TopologyLevel::host_bridge, "host_bridge"},
        {TopologyLevel::node, "node"},
        {TopologyLevel::system, "system"},
    };
    return detail::enum_text(level, names, "TopologyLevel");
}

}  // namespace cudacore::system
