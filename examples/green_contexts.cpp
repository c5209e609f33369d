// Green contexts: a device's SMs split into two groups, a green context on each, and a kernel
// launched on both at once; each block records the SM it ran on, and the two sets must stay
// inside their groups' sizes and never share an SM. cuda.core has green contexts but no example.
#include <cudacore/cudacore.hpp>

#include <algorithm>
#include <cstdio>
#include <set>
#include <vector>

static const char* kSource = R"(
extern "C" __global__ void where(unsigned* sm_of_block, float* x, size_t n) {
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    if (threadIdx.x == 0) sm_of_block[blockIdx.x] = sm;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        x[i] = 2.0f * x[i];
}
)";

int main() try {
    using namespace cudacore;
    if (!system::driver_available() || system::device_count() == 0) {
        std::printf("skipped: no CUDA driver or GPU on this machine\n");
        return 0;
    }
    Device device(0);
    SmResource sms;
    try {
        sms = sm_resource(device);
    } catch (const DriverError& e) {
        if (e.status() != CUDA_ERROR_NOT_SUPPORTED) throw;
        std::printf("skipped: this device or driver has no green contexts (%s)\n", e.what());
        return 0;
    }
    const unsigned granule = std::max(1u, sms.min_partition_size());
    const unsigned half = sms.sm_count() / 2 / granule * granule;
    if (half == 0) {
        std::printf("skipped: %u SMs cannot make two groups of %u\n", sms.sm_count(), granule);
        return 0;
    }
    SmSplit split = sms.split({.count = 2, .min_sm_count = half});
    std::printf("%s\n", split.describe().c_str());
    GreenContext left = GreenContext::create(split.groups[0]);
    GreenContext right = GreenContext::create(split.groups[1]);
    Stream a = left.create_stream(), b = right.create_stream();

    Kernel where = Program(kSource, SourceType::cxx, {.arch = device.arch()})
                       .compile(CodeType::cubin)
                       .get_kernel("where");
    const unsigned blocks = 8 * sms.sm_count();   // more blocks than SMs: every SM gets some
    const std::size_t n = std::size_t(blocks) * 256;
    Buffer sm_a = device.allocate(blocks * sizeof(unsigned), a);
    Buffer sm_b = device.allocate(blocks * sizeof(unsigned), b);
    Buffer x_a = device.allocate(n * sizeof(float), a);
    Buffer x_b = device.allocate(n * sizeof(float), b);
    x_a.fill_uint32(0x3f800000, a);   // 1.0f
    x_b.fill_uint32(0x40400000, b);   // 3.0f
    const LaunchConfig config{.grid = blocks, .block = 256};
    launch(a, config, where, sm_a, x_a, n);   // both run at the same time, on their own SMs
    launch(b, config, where, sm_b, x_b, n);

    std::vector<unsigned> on_a(blocks), on_b(blocks);
    std::vector<float> values_a(n), values_b(n);
    sm_a.copy_to(on_a, a);
    x_a.copy_to(values_a, a);
    sm_b.copy_to(on_b, b);
    x_b.copy_to(values_b, b);
    a.sync();
    b.sync();

    const std::set<unsigned> used_a(on_a.begin(), on_a.end()), used_b(on_b.begin(), on_b.end());
    std::size_t shared = 0;
    for (unsigned sm : used_a) shared += used_b.count(sm);
    std::size_t wrong = 0;
    for (float v : values_a) wrong += v != 2.0f;
    for (float v : values_b) wrong += v != 6.0f;
    const bool contained = used_a.size() <= left.sm_count() && used_b.size() <= right.sm_count();
    std::printf("left ran on %zu of its %u SMs, right on %zu of its %u, %zu SMs shared, "
                "%zu wrong values\n",
                used_a.size(), left.sm_count(), used_b.size(), right.sm_count(), shared, wrong);
    return contained && shared == 0 && wrong == 0 ? 0 : 1;
} catch (const cudacore::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
}
