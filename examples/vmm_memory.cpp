// Virtual memory: a buffer that grows from 2 MiB to 64 MiB keeping its contents (the address kept
// where the range after it is free), and a resource of allocation type managed, which some
// drivers refuse with a clear error. Mirrors cuda.core's examples/vmm_memory_example.py.
#include <cudacore/cudacore.hpp>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <vector>

int main() try {
    using namespace cudacore;
    if (!system::driver_available() || system::device_count() == 0) {
        std::printf("skipped: no CUDA driver or GPU on this machine\n");
        return 0;
    }
    Device device(0);
    Stream stream = device.create_stream();
    auto vmm = std::make_shared<VirtualMemoryResource>(device);

    const std::size_t small = 2 << 20, large = 64 << 20;
    Buffer buffer = vmm->allocate(small, stream);
    std::vector<unsigned> pattern(small / sizeof(unsigned));
    for (std::size_t i = 0; i < pattern.size(); ++i) pattern[i] = unsigned(i * 2654435761u);
    buffer.copy_from(pattern, stream);
    const CUdeviceptr before = buffer.handle();

    Buffer grown = vmm->grow(buffer, large, stream);  // `buffer` is closed now
    std::vector<unsigned> all(grown.size() / sizeof(unsigned));
    grown.copy_to(all, stream);
    stream.sync();
    const bool kept = std::equal(pattern.begin(), pattern.end(), all.begin());
    grown.fill_byte(0x5a, stream);  // the whole 64 MiB is usable
    stream.sync();
    std::printf("grew %zu MiB to %zu MiB (%s), contents %s\n", small >> 20, grown.size() >> 20,
                grown.handle() == before ? "same address" : "moved", kept ? "kept" : "LOST");

    // Managed physical memory: allowed to fail, as in cuda.core's example, but clearly.
    try {
        auto managed = std::make_shared<VirtualMemoryResource>(
            device, VirtualMemoryResourceOptions{.allocation_type = VirtualMemoryAllocationType::managed});
        Buffer m = managed->allocate(small, stream);
        std::printf("managed virtual memory: %zu MiB allocated\n", m.size() >> 20);
    } catch (const Error& e) {
        std::printf("managed virtual memory refused: %s\n", e.what());
    }
    return kept && grown.size() >= large ? 0 : 1;
} catch (const cudacore::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
}
