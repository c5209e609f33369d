// Device properties: every GPU's name, compute capability, memory and a few of its typed
// attributes (DeviceProperties has one member per CU_DEVICE_ATTRIBUTE_), checked for sanity.
// Mirrors cuda.core's examples/show_device_properties.py.
#include <cudacore/cudacore.hpp>

#include <cstdio>

int main() try {
    using namespace cudacore;
    if (!system::driver_available() || system::device_count() == 0) {
        std::printf("skipped: no CUDA driver or GPU on this machine\n");
        return 0;
    }
    const int version = system::driver_version();
    std::printf("driver %d.%d, %d device(s)\n", version / 1000, version % 1000 / 10,
                system::device_count());
    int problems = 0;
    for (const Device& device : Device::all()) {
        const DeviceProperties& p = device.properties();   // read once, cached per device
        const ComputeCapability cc = device.compute_capability();
        std::printf("device %d: %s (%s), sm_%d%d, %zu MiB\n", device.ordinal(),
                    device.name().c_str(), device.pci_bus_id().c_str(), cc.major, cc.minor,
                    device.total_memory() >> 20);
        std::printf("  %d SMs, warp %d, max %d threads per block, L2 %d KiB, managed memory %s, "
                    "cooperative launch %s\n",
                    p.multiprocessor_count, p.warp_size, p.max_threads_per_block,
                    p.l2_cache_size >> 10, p.managed_memory ? "yes" : "no",
                    p.cooperative_launch ? "yes" : "no");
        // Facts true of every CUDA device: a wrong value means the properties were misread.
        if (p.warp_size != 32 || p.multiprocessor_count < 1 || p.max_threads_per_block < 64 ||
            p.compute_capability_major != cc.major || device.total_memory() == 0) {
            std::fprintf(stderr, "device %d: implausible properties\n", device.ordinal());
            ++problems;
        }
    }
    return problems == 0 ? 0 : 1;
} catch (const cudacore::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
}
