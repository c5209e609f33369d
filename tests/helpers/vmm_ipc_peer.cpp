// The other process of the physical allocation IPC GPU tests. Usage: vmm_ipc_peer MODE SOCKET_PATH
//   import-check-rewrite: receives a physical allocation, maps it into a range of its own (access
//       for its device), counts the words that differ from the exporter's pattern 3i + 1 with a
//       kernel, rewrites them as 5i + 2, prints "mismatches: N", says "written", unmaps and lets
//       go of everything, says "closed".
//   import-check-rewrite-on-device-1: the same with the kernels on device 1, which the mapping
//       gives access to the allocation of device 0.
#include "multi_gpu_kernels.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/physical_allocation_ipc.hpp"
#include "cudacore/virtual_address_range.hpp"
#include "cudacore/virtual_memory_mapping.hpp"

#include <cstdio>
#include <string>

namespace {

using namespace cudacore;
using namespace std::chrono_literals;

int import_check_rewrite(const IpcChannel& channel, int compute_ordinal) {
    PhysicalAllocation memory = receive_physical_allocation(channel, 60s);
    const Device compute(compute_ordinal < 0 ? memory.device_ordinal() : compute_ordinal);
    std::printf("imported %s; kernels on device %d\n", memory.description().c_str(), compute.ordinal());
    std::vector<PeerMemoryAccess> access{{.device = compute.ordinal()}};
    if (compute.ordinal() != memory.device_ordinal()) access.push_back({.device = memory.device_ordinal()});
    unsigned long long wrong = ~0ull;
    {
        VirtualAddressRange range = VirtualAddressRange::reserve(compute, memory.size());
        VirtualMemoryMapping mapping = VirtualMemoryMapping::map(range, 0, memory, {.access = access});
        const ObjectCode code = test::compile_multi_gpu_kernels(compute);
        Stream stream = compute.create_stream();
        Buffer shared = mapping.as_buffer();
        wrong = test::mismatches(code, shared, stream, 3, 1);
        test::write_pattern(code, shared, stream, 5, 2);
        stream.sync();
        std::printf("mismatches: %llu\n", wrong);
        std::fflush(stdout);
        channel.send("written");
    }  // unmapped, the range freed
    memory.close();  // this process's handle released
    channel.send("closed");
    return wrong == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) try {
    if (argc != 3) {
        std::fprintf(stderr, "usage: vmm_ipc_peer MODE SOCKET_PATH\n");
        return 2;
    }
    const std::string mode = argv[1];
    IpcChannel channel = IpcChannel::connect(argv[2]);
    if (mode == "import-check-rewrite") return import_check_rewrite(channel, -1);
    if (mode == "import-check-rewrite-on-device-1") return import_check_rewrite(channel, 1);
    std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
    return 2;
} catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    return 3;
}
