// A one-dimensional TMA tensor map: 1024 floats in tiles of 128, each block copying its tile into
// shared memory with one bulk tensor copy (Hopper's TMA), then writing it out doubled. Then the
// same map re-pointed at a second tensor with replace_address. Mirrors cuda.core's
// examples/tma_tensor_map.py and tma_replace_address.py. Needs compute capability 9.0 or later.
#include <cudacore/cudacore.hpp>

#include <cstdio>
#include <vector>

// The kernel takes the map as a 128-byte __grid_constant__ parameter (a CUtensorMap).
static const char* kSource = R"(
struct alignas(64) TensorMap { unsigned long long opaque[16]; };

extern "C" __global__ void double_tiles(const __grid_constant__ TensorMap map, float* out) {
    __shared__ alignas(128) float tile[128];
    __shared__ alignas(8) unsigned long long barrier;
    const unsigned bar = static_cast<unsigned>(__cvta_generic_to_shared(&barrier));
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(tile));
    const int first = blockIdx.x * 128;  // a multiple of 16 bytes, as TMA wants
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar));
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 512;" ::"r"(bar) : "memory");
        asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes"
                     " [%0], [%1, {%2}], [%3];"
                     ::"r"(dst), "l"(&map), "r"(first), "r"(bar) : "memory");
    }
    unsigned done = 0;
    while (!done)
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;"
                     " selp.u32 %0, 1, 0, p; }" : "=r"(done) : "r"(bar) : "memory");
    out[first + threadIdx.x] = 2.0f * tile[threadIdx.x];
}
)";

int main() try {
    using namespace cudacore;
    if (!system::driver_available() || system::device_count() == 0) {
        std::printf("skipped: no CUDA driver or GPU on this machine\n");
        return 0;
    }
    Device device(0);
    if (device.compute_capability().major < 9) {
        std::printf("skipped: TMA needs compute capability 9.0 or later (device 0 is %s)\n",
                    device.arch().c_str());
        return 0;
    }
    Stream stream = device.create_stream();
    Kernel kernel = Program(kSource, SourceType::cxx, {.arch = device.arch()})
                        .compile(CodeType::cubin)
                        .get_kernel("double_tiles");

    const std::size_t n = 1024;
    std::vector<float> a(n), b(n);
    for (std::size_t i = 0; i < n; ++i) {
        a[i] = float(i);
        b[i] = float(n - i);
    }
    Buffer first = device.allocate(n * sizeof(float), stream);
    Buffer second = device.allocate(n * sizeof(float), stream);
    Buffer out = device.allocate(n * sizeof(float), stream);
    first.copy_from(a, stream);
    second.copy_from(b, stream);

    // Rank 1: shape {1024}, box {128}; the map holds `first` while it lives.
    TensorMap map = TensorMap::tiled(
        first, {.element_type = TensorDataType::float32, .shape = {n}, .box = {128}});
    std::size_t wrong = 0;
    std::vector<float> result(n);
    for (const std::vector<float>* expected : {&a, &b}) {
        launch(stream, LaunchConfig{.grid = unsigned(n / 128), .block = 128}, kernel, map, out);
        out.copy_to(result, stream);
        stream.sync();
        for (std::size_t i = 0; i < n; ++i)
            if (result[i] != 2.0f * (*expected)[i]) ++wrong;
        map.replace_address(second);  // the same layout, another tensor
    }
    std::printf("TMA tiles of 128 floats from two tensors through one map: %zu wrong\n", wrong);
    return wrong == 0 ? 0 : 1;
} catch (const cudacore::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
}
