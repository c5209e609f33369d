// Vector addition: compile a kernel at run time, copy two vectors to the GPU, add them there,
// copy the sum back and check every element on the CPU.
// Mirrors cuda.core's examples/vector_add.py.
#include <cudacore/cudacore.hpp>

#include <cstdio>
#include <vector>

static const char* kSource = R"(
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
)";

int main() try {
    using namespace cudacore;
    if (!system::driver_available() || system::device_count() == 0) {
        std::printf("skipped: no CUDA driver or GPU on this machine\n");
        return 0;
    }
    Device device(0);
    Stream stream = device.create_stream();
    ObjectCode code =
        Program(kSource, SourceType::cxx, {.arch = device.arch()}).compile(CodeType::cubin);
    Kernel vector_add = code.get_kernel("vector_add");

    const std::size_t n = 1'000'000;
    std::vector<float> a(n), b(n), c(n);
    for (std::size_t i = 0; i < n; ++i) {
        a[i] = float(i);
        b[i] = 2.0f * float(i % 97);
    }
    Buffer da = device.allocate(n * sizeof(float), stream);
    Buffer db = device.allocate(n * sizeof(float), stream);
    Buffer dc = device.allocate(n * sizeof(float), stream);
    da.copy_from(a, stream);
    db.copy_from(b, stream);

    // Buffers are passed as their device pointers; the argument sizes are checked first.
    launch(stream, LaunchConfig{.grid = unsigned((n + 255) / 256), .block = 256}, vector_add, da,
           db, dc, n);
    dc.copy_to(c, stream);
    stream.sync();

    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i)
        if (c[i] != a[i] + b[i]) ++wrong;
    std::printf("vector_add of %zu floats: %zu wrong\n", n, wrong);
    return wrong == 0 ? 0 : 1;
} catch (const cudacore::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
}
