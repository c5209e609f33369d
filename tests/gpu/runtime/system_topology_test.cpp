// NVLinks, topology, peer-to-peer status, ECC, clocks and processes on real GPUs, checked
// against nvidia-smi (`--query-gpu`, `--query-compute-apps`, `topo -m`) and the CUDA driver.
// The pair checks need two GPUs and skip with the reason on fewer.
#include "test_support.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/system.hpp"
#include "cudacore/system_info.hpp"
#include "cudacore/system_topology.hpp"

#include <unistd.h>

#include <cctype>
#include <sstream>

namespace {

using namespace cudacore;

std::vector<std::string> fields_of(const std::string& line, char separator) {
    std::vector<std::string> out;
    std::stringstream in(line);
    std::string field;
    while (std::getline(in, field, separator)) {
        const auto first = field.find_first_not_of(" \t");
        const auto last = field.find_last_not_of(" \t");
        out.push_back(first == std::string::npos ? "" : field.substr(first, last - first + 1));
    }
    return out;
}

// nvidia-smi through the shell (run_process does not search PATH); empty when it did not run.
std::vector<std::string> smi_lines(const std::string& arguments) {
    auto result = test::run_process({"/bin/sh", "-c", "nvidia-smi " + arguments});
    if (result.exit_code != 0) return {};
    std::vector<std::string> lines;
    std::stringstream in(result.out);
    for (std::string line; std::getline(in, line);)
        if (!line.empty()) lines.push_back(line);
    return lines;
}

#define REQUIRE_NVML_AND_SMI(lines)                                                       \
    CUDACORE_REQUIRE_GPU();                                                               \
    if (!system::nvml_available()) GTEST_SKIP() << "NVML (libnvidia-ml.so.1) is not installed"; \
    if ((lines).empty()) GTEST_SKIP() << "nvidia-smi is not installed or failed"

TEST(SystemTopologyGpu, ReadingsMatchNvidiaSmi) {
    const auto lines = smi_lines(
        "--query-gpu=index,pci.bus_id,ecc.mode.current,clocks.max.sm,clocks.max.memory,"
        "enforced.power.limit,temperature.gpu --format=csv,noheader,nounits");
    REQUIRE_NVML_AND_SMI(lines);
    ASSERT_EQ(lines.size(), system::SystemDevice::count());
    for (const std::string& line : lines) {
        const auto row = fields_of(line, ',');
        ASSERT_EQ(row.size(), 7u) << line;
        const auto gpu = system::SystemDevice::at(static_cast<unsigned>(std::stoul(row[0])));
        ASSERT_EQ(gpu.pci_bus_id(), row[1]);
        const system::SystemReadings r = gpu.readings();
        if (row[2] == "Enabled" || row[2] == "Disabled") {
            ASSERT_TRUE(r.ecc.enabled.has_value()) << line;
            EXPECT_EQ(*r.ecc.enabled, row[2] == "Enabled") << line;
            if (*r.ecc.enabled) EXPECT_TRUE(r.ecc.uncorrected_volatile.has_value()) << line;
        } else {
            EXPECT_FALSE(r.ecc.enabled.has_value()) << "nvidia-smi says " << row[2];
        }
        ASSERT_TRUE(r.max_sm_mhz && r.max_memory_mhz) << "an H100 reports its clocks";
        EXPECT_EQ(std::to_string(*r.max_sm_mhz), row[3]);
        EXPECT_EQ(std::to_string(*r.max_memory_mhz), row[4]);
        ASSERT_TRUE(r.power_limit_watts.has_value());
        EXPECT_NEAR(*r.power_limit_watts, std::stod(row[5]), 1.0) << line;
        ASSERT_TRUE(r.temperature_celsius.has_value());
        EXPECT_NEAR(*r.temperature_celsius, std::stoi(row[6]), 5) << line;  // read moments apart
        ASSERT_TRUE(r.sm_mhz && r.memory && r.utilization && r.power_watts);
        EXPECT_LE(*r.sm_mhz, *r.max_sm_mhz);
    }
}

TEST(SystemTopologyGpu, ThisProcessIsListedOnItsGpuAsNvidiaSmiListsIt) {
    CUDACORE_REQUIRE_GPU();
    if (!system::nvml_available()) GTEST_SKIP() << "NVML (libnvidia-ml.so.1) is not installed";
    Device device(0);
    // A context and memory, so the process is listed.
    auto buffer = device.allocate(64 << 20, device.default_stream());
    device.sync();
    const auto processes = device.system_device().processes();
    ASSERT_TRUE(processes.has_value()) << "the driver lists compute processes";
    const auto lines = smi_lines("--query-compute-apps=gpu_bus_id,pid,used_memory --format=csv,noheader,nounits");
    const std::string pid = std::to_string(::getpid());
    bool smi_lists_us = false;
    for (const auto& line : lines) {
        const auto row = fields_of(line, ',');
        if (row.size() == 3 && row[1] == pid &&
            system::find_pci_bus_id({device.system_device().pci_bus_id()}, row[0]))
            smi_lists_us = true;
    }
    bool we_list_us = false;
    for (const auto& process : *processes) {
        if (process.pid != static_cast<unsigned>(::getpid())) continue;
        we_list_us = true;
        if (process.used_memory_bytes) EXPECT_GE(*process.used_memory_bytes, 64u << 20);
    }
    // In a container the pids NVML gives are the host's: then neither sees our own pid.
    if (!lines.empty()) EXPECT_EQ(we_list_us, smi_lists_us) << "pid " << pid;
    else std::printf("nvidia-smi did not run: only NVML's list was read (%zu processes)\n", processes->size());
}

TEST(SystemTopologyGpu, MatrixMatchesNvidiaSmiTopoAndPeerStatusMatchesTheDriver) {
    const auto lines = smi_lines("topo -m");
    REQUIRE_NVML_AND_SMI(lines);
    if (system::SystemDevice::count() < 2 || system::device_count() < 2)
        GTEST_SKIP() << "needs two GPUs; this machine has " << system::device_count();
    const system::Topology topology = system::topology();
    ASSERT_EQ(topology.links.size(), system::SystemDevice::count());
    std::printf("%s", system::format_topology_matrix(topology).c_str());
    for (std::size_t i = 0; i < topology.links.size(); ++i) {
        std::vector<std::string> row;
        for (const auto& line : lines) {
            std::istringstream words(line);
            std::vector<std::string> tokens;
            for (std::string w; words >> w;) tokens.push_back(w);
            if (!tokens.empty() && tokens[0] == "GPU" + std::to_string(i)) row = tokens;
        }
        ASSERT_GT(row.size(), topology.links.size()) << "no row for GPU" << i << " in nvidia-smi topo -m";
        for (std::size_t j = 0; j < topology.links.size(); ++j)
            EXPECT_EQ(i == j ? "X" : system::link_label(topology.links[i][j]), row[1 + j])
                << "GPU" << i << " -> GPU" << j;
    }
    // NVML's peer status and the CUDA driver's attributes describe the same pair.
    const Device a(0), b(1);
    const auto index_a = system::find_pci_bus_id(topology.pci_bus_ids, a.pci_bus_id());
    const auto index_b = system::find_pci_bus_id(topology.pci_bus_ids, b.pci_bus_id());
    ASSERT_TRUE(index_a && index_b);
    EXPECT_EQ(topology.cuda_ordinals[*index_a], 0);
    EXPECT_EQ(topology.cuda_ordinals[*index_b], 1);
    const system::GpuLink& link = topology.links[*index_a][*index_b];
    const system::PeerAttributes attributes = system::peer_attributes(a, b);
    EXPECT_EQ(attributes.access_supported, a.can_access_peer(b));
    if (link.peer.read) EXPECT_EQ(*link.peer.read, attributes.access_supported);
    if (link.peer.atomics) EXPECT_EQ(*link.peer.atomics, attributes.native_atomics);
    if (link.nvlinks > 0) {
        EXPECT_EQ(link.peer.nvlink, std::optional<bool>(true));
        // Each active link of a that ends at b, or at an NVSwitch of the fabric both are on, is
        // counted once.
        const auto nvlinks = a.system_device().nvlinks();
        ASSERT_TRUE(nvlinks.has_value());
        unsigned to_b = 0, to_switch = 0;
        for (const auto& l : *nvlinks) {
            to_b += l.active && l.remote_index == *index_b ? 1 : 0;
            to_switch += l.active && l.to_switch ? 1 : 0;
        }
        std::printf("GPU%zu -> GPU%zu: %u NVLinks direct, %u to NVSwitches\n", *index_a, *index_b, to_b,
                    to_switch);
        EXPECT_EQ(to_b + to_switch, link.nvlinks);
    }
}

TEST(SystemTopologyGpu, DevicesTopologyCommandPrintsTheMatrixAndReadings) {
    CUDACORE_REQUIRE_GPU();
    if (!system::nvml_available()) GTEST_SKIP() << "NVML (libnvidia-ml.so.1) is not installed";
    auto result = test::run_process({test::cli_path().string(), "devices", "--topology"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.out.find("GPU0    X"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("Legend:"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("  ECC "), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("  processes "), std::string::npos) << result.out;
    std::printf("%s", result.out.c_str());
    auto json = test::run_process({test::cli_path().string(), "devices", "--json"});
    ASSERT_EQ(json.exit_code, 0) << json.err;
    EXPECT_NE(json.out.find("\"topology\""), std::string::npos) << json.out;
    EXPECT_NE(json.out.find("\"ecc_enabled\""), std::string::npos) << json.out;
    EXPECT_NE(json.out.find("\"nvlinks\""), std::string::npos) << json.out;
}

}  // namespace
