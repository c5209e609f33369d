// One vector striped over every GPU through virtual memory, as CUDA's vectorAddMMAP sample does:
// each device backs one stripe with a physical allocation, the stripes are mapped side by side
// into one reserved address range that every device may use, and a kernel on device 0 adds two
// such vectors. Works with one GPU (one stripe). Checks the result; exits 1 when it is wrong.
#include <cudacore/cudacore.hpp>

#include <algorithm>
#include <cstdio>
#include <vector>

static const char* kSource = R"(
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        c[i] = a[i] + b[i];
}
)";

namespace {

using namespace cudacore;

// The devices that can take part: virtual memory management, and each other's memory reachable.
std::vector<Device> striping_devices() {
    std::vector<Device> chosen;
    for (const Device& device : system::devices()) {
        if (!device.attribute(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED)) continue;
        const bool reachable = std::all_of(chosen.begin(), chosen.end(), [&](const Device& other) {
            return device.can_access_peer(other) && other.can_access_peer(device);
        });
        if (reachable) chosen.push_back(device);
    }
    return chosen;
}

// `bytes` (rounded up) striped over `devices`: one range, one allocation and mapping per device,
// every device given read-write access to all of it. The Buffer holds the mappings, which hold
// the range and the allocations.
Buffer striped_vector(const std::vector<Device>& devices, std::size_t bytes) {
    std::size_t granularity = 0;
    for (const Device& device : devices)
        granularity = std::max(granularity, allocation_granularity(device).minimum);
    const std::size_t stripe = (bytes / devices.size() + granularity - 1) / granularity * granularity;
    std::vector<PeerMemoryAccess> everyone;
    for (const Device& device : devices) everyone.push_back({.device = device.ordinal()});
    VirtualAddressRange range = VirtualAddressRange::reserve(devices.front(), stripe * devices.size());
    std::vector<VirtualMemoryMapping> mappings;
    for (std::size_t i = 0; i < devices.size(); ++i) {
        PhysicalAllocation memory = PhysicalAllocation::create(devices[i], stripe);
        mappings.push_back(VirtualMemoryMapping::map(range, i * stripe, memory, {.access = everyone}));
    }
    return as_buffer(mappings);
}

}  // namespace

int main() try {
    if (!system::driver_available() || system::device_count() == 0) {
        std::printf("skipped: no CUDA driver or GPU on this machine\n");
        return 0;
    }
    const std::vector<Device> devices = striping_devices();
    if (devices.empty()) {
        std::printf("skipped: no device with virtual memory management\n");
        return 0;
    }
    const Device& device = devices.front();
    // 32 MiB or more: every stripe is a whole number of allocation granules.
    Buffer a = striped_vector(devices, std::size_t{32} << 20);
    Buffer b = striped_vector(devices, a.size());
    Buffer c = striped_vector(devices, a.size());
    const std::size_t n = a.size() / sizeof(float);
    std::vector<float> host_a(n), host_b(n), host_c(n);
    for (std::size_t i = 0; i < n; ++i) {
        host_a[i] = static_cast<float>(i % 1000);
        host_b[i] = 0.5f * static_cast<float>(i % 777);
    }
    Stream stream = device.create_stream();
    a.copy_from(host_a, stream);
    b.copy_from(host_b, stream);
    Kernel kernel = Program(kSource, SourceType::cxx, {.arch = device.arch()})
                        .compile(CodeType::cubin)
                        .get_kernel("vector_add");
    launch(stream, LaunchConfig{.grid = 1024, .block = 256}, kernel, a, b, c, n);
    c.copy_to(host_c, stream);
    stream.sync();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += host_c[i] != host_a[i] + host_b[i];
    std::printf("added two vectors of %zu floats, each striped over %zu GPU(s): %zu wrong\n", n,
                devices.size(), wrong);
    return wrong == 0 ? 0 : 1;
} catch (const cudacore::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
}
