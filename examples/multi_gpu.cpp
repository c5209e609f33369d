// Two GPUs at once: one program compiled once, device 0 adds and device 1 subtracts vectors, each
// on its own stream and buffers, then device 0's result is copied to device 1 (over the peer link
// where the devices allow it). Mirrors cuda.core's examples/simple_multi_gpu_example.py.
#include <cudacore/cudacore.hpp>

#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

static const char* kSource = R"(
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        c[i] = a[i] + b[i];
}
extern "C" __global__ void vector_sub(const float* a, const float* b, float* c, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        c[i] = a[i] - b[i];
}
)";

namespace {

using namespace cudacore;

// One compile for both devices: a cubin where they share an arch, else PTX for the older one,
// which the driver compiles for each device when it first runs there.
ObjectCode compile_for(const Device& first, const Device& second) {
    if (first.arch() == second.arch())
        return Program(kSource, SourceType::cxx, {.arch = first.arch()}).compile(CodeType::cubin);
    const ComputeCapability a = first.compute_capability(), b = second.compute_capability();
    const ComputeCapability older = std::tie(a.major, a.minor) < std::tie(b.major, b.minor) ? a : b;
    const std::string arch = "compute_" + std::to_string(older.major * 10 + older.minor);
    return Program(kSource, SourceType::cxx, {.arch = arch}).compile(CodeType::ptx);
}

std::size_t count_wrong(const std::vector<float>& got, const std::vector<float>& expected) {
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < got.size(); ++i) wrong += got[i] != expected[i];
    return wrong;
}

}  // namespace

int main() try {
    if (!system::driver_available() || system::device_count() == 0) {
        std::printf("skipped: no CUDA driver or GPU on this machine\n");
        return 0;
    }
    if (system::device_count() < 2) {
        std::printf("skipped: needs two GPUs (found %d)\n", system::device_count());
        return 0;
    }
    const Device gpu0(0), gpu1(1);
    std::printf("device 0: %s (%s), device 1: %s (%s)\n", gpu0.name().c_str(), gpu0.arch().c_str(),
                gpu1.name().c_str(), gpu1.arch().c_str());
    const ObjectCode code = compile_for(gpu0, gpu1);
    // A Kernel is not tied to a device: each launch runs on its stream's device.
    const Kernel add = code.get_kernel("vector_add");
    const Kernel sub = code.get_kernel("vector_sub");

    const std::size_t n = 50'000, bytes = n * sizeof(float);
    std::vector<float> a(n), b(n), sum(n), difference(n);
    for (std::size_t i = 0; i < n; ++i) {
        a[i] = 0.5f * float(i);
        b[i] = 1.0f - float(i % 1000);
        sum[i] = a[i] + b[i];
        difference[i] = a[i] - b[i];
    }
    const LaunchConfig config{.grid = unsigned((n + 255) / 256), .block = 256};

    // Device 0's sum goes into a pool of its own, so that device 1 can be given access to it
    // below without changing the device's default pool.
    auto pool0 = DeviceMemoryResource::create_owned_pool(gpu0);
    Stream stream0 = gpu0.create_stream();
    Buffer a0 = gpu0.allocate(bytes, stream0), b0 = gpu0.allocate(bytes, stream0);
    Buffer sum0 = pool0->allocate(bytes, stream0);
    a0.copy_from(a, stream0);
    b0.copy_from(b, stream0);
    launch(stream0, config, add, a0, b0, sum0, n);

    Stream stream1 = gpu1.create_stream();
    Buffer a1 = gpu1.allocate(bytes, stream1), b1 = gpu1.allocate(bytes, stream1);
    Buffer difference1 = gpu1.allocate(bytes, stream1);
    a1.copy_from(a, stream1);
    b1.copy_from(b, stream1);
    launch(stream1, config, sub, a1, b1, difference1, n);  // runs while device 0 adds

    // Device 0's sum, copied to device 1 on device 1's stream once device 0 has made it. Pool
    // memory is reached through the pool's access list as well as the contexts' peer access.
    if (gpu1.can_access_peer(gpu0)) {
        gpu1.enable_peer_access(gpu0);
        pool0->set_peer_accessible_by({gpu1});
    }
    Buffer sum1 = gpu1.allocate(bytes, stream1);
    stream1.wait(stream0);
    const CopyPath path = copy_between_devices(sum1, sum0, stream1);

    std::vector<float> got_sum(n), got_difference(n), got_copy(n);
    sum0.copy_to(got_sum, stream0);
    difference1.copy_to(got_difference, stream1);
    sum1.copy_to(got_copy, stream1);
    stream0.sync();
    stream1.sync();
    const std::size_t wrong_sum = count_wrong(got_sum, sum);
    const std::size_t wrong_difference = count_wrong(got_difference, difference);
    const std::size_t wrong_copy = count_wrong(got_copy, sum);
    std::printf("device 0 added, device 1 subtracted %zu floats; the sum reached device 1 by a %s "
                "copy: %zu + %zu + %zu wrong values\n",
                n, to_string(path).c_str(), wrong_sum, wrong_difference, wrong_copy);
    return wrong_sum == 0 && wrong_difference == 0 && wrong_copy == 0 ? 0 : 1;
} catch (const cudacore::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
}
