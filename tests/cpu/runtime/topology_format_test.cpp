// The driver-free half of the topology API: level names and codes, the matrix as
// `nvidia-smi topo -m` prints it, and matching PCI bus ids across NVML's and CUDA's forms.
#include "cudacore/system_topology.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace {

using namespace cudacore::system;

TEST(TopologyFormat, EveryLevelHasItsNameAndNvidiaSmiCode) {
    EXPECT_STREQ(topology_level_name(TopologyLevel::same_board), "same board");
    EXPECT_STREQ(topology_level_name(TopologyLevel::single_switch), "single switch");
    EXPECT_STREQ(topology_level_name(TopologyLevel::multiple_switch), "multiple switch");
    EXPECT_STREQ(topology_level_name(TopologyLevel::host_bridge), "host bridge");
    EXPECT_STREQ(topology_level_name(TopologyLevel::node), "node");
    EXPECT_STREQ(topology_level_name(TopologyLevel::system), "system");
    EXPECT_STREQ(topology_level_code(TopologyLevel::same_board), "BRD");
    EXPECT_STREQ(topology_level_code(TopologyLevel::single_switch), "PIX");
    EXPECT_STREQ(topology_level_code(TopologyLevel::multiple_switch), "PXB");
    EXPECT_STREQ(topology_level_code(TopologyLevel::host_bridge), "PHB");
    EXPECT_STREQ(topology_level_code(TopologyLevel::node), "NODE");
    EXPECT_STREQ(topology_level_code(TopologyLevel::system), "SYS");
}

TEST(TopologyFormat, LinkLabelPrefersNvlinksThenLevelThenUnknown) {
    GpuLink link;
    EXPECT_EQ(link_label(link), "?");
    link.level = TopologyLevel::node;
    EXPECT_EQ(link_label(link), "NODE");
    link.nvlinks = 18;
    EXPECT_EQ(link_label(link), "NV18");
}

// Three GPUs: 0 and 1 joined by 18 NVLinks, 2 across the system, one level unsupported.
Topology three_gpus() {
    Topology t;
    t.names = {"A", "B", "C"};
    t.pci_bus_ids = {"00000000:18:00.0", "00000000:2A:00.0", "00000000:9A:00.0"};
    t.cuda_ordinals = {1, 0, std::nullopt};
    t.links.assign(3, std::vector<GpuLink>(3));
    t.links[0][1].nvlinks = t.links[1][0].nvlinks = 18;
    t.links[0][1].level = t.links[1][0].level = TopologyLevel::node;
    t.links[0][2].level = t.links[2][0].level = TopologyLevel::system;
    t.links[1][2].level = TopologyLevel::host_bridge;  // [2][1] stays unsupported
    return t;
}

std::vector<std::vector<std::string>> words_of_rows(const std::string& text, std::size_t rows) {
    std::istringstream in(text);
    std::string line;
    std::vector<std::vector<std::string>> out;
    while (out.size() < rows && std::getline(in, line)) {
        std::istringstream words(line);
        std::vector<std::string> row;
        for (std::string w; words >> w;) row.push_back(w);
        out.push_back(row);
    }
    return out;
}

TEST(TopologyFormat, MatrixHasAHeaderOneRowPerGpuAndTheLegend) {
    const std::string text = format_topology_matrix(three_gpus());
    const auto rows = words_of_rows(text, 4);
    ASSERT_EQ(rows.size(), 4u) << text;
    EXPECT_EQ(rows[0], (std::vector<std::string>{"GPU0", "GPU1", "GPU2", "CUDA", "ordinal"})) << text;
    EXPECT_EQ(rows[1], (std::vector<std::string>{"GPU0", "X", "NV18", "SYS", "1"})) << text;
    EXPECT_EQ(rows[2], (std::vector<std::string>{"GPU1", "NV18", "X", "PHB", "0"})) << text;
    EXPECT_EQ(rows[3], (std::vector<std::string>{"GPU2", "SYS", "?", "X", "-"})) << text;
    EXPECT_NE(text.find("NV#  = # active NVLinks"), std::string::npos) << text;
    EXPECT_NE(text.find("?    = not supported"), std::string::npos) << text;
}

TEST(TopologyFormat, AnEmptyMachineGivesAHeaderAndTheLegend) {
    const std::string text = format_topology_matrix(Topology{});
    EXPECT_EQ(text.substr(0, text.find('\n')).find("GPU"), std::string::npos) << text;
    EXPECT_NE(text.find("Legend:"), std::string::npos);
}

TEST(TopologyFormat, BusIdsMatchAcrossDomainWidthsAndCase) {
    const std::vector<std::string> nvml = {"00000000:18:00.0", "00000001:2A:00.0"};
    EXPECT_EQ(find_pci_bus_id(nvml, "0000:18:00.0"), 0u);   // CUDA's 4-digit domain
    EXPECT_EQ(find_pci_bus_id(nvml, "0001:2a:00.0"), 1u);   // lower case
    EXPECT_EQ(find_pci_bus_id(nvml, "00000001:2A:00.0"), 1u);
    EXPECT_EQ(find_pci_bus_id(nvml, "0000:2A:00.0"), std::nullopt);  // another domain
    EXPECT_EQ(find_pci_bus_id(nvml, "0000:18:00.1"), std::nullopt);  // another function
    EXPECT_EQ(find_pci_bus_id({}, "0000:18:00.0"), std::nullopt);
}

}  // namespace
