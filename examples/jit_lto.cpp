// JIT with link-time optimization: a kernel calls a device function it only declares; two
// different definitions are compiled to LTO-IR and linked with the kernel by nvJitLink, which
// inlines each across the units. Mirrors cuda.core's examples/jit_lto_fractal.py.
#include <cudacore/cudacore.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

// Iterates z = f(z) + c from z = 0 for each point c of a grid and counts the steps before |z|
// exceeds 2 (an escape-time fractal); f is the part the user supplies.
static const char* kKernel = R"(
extern __device__ float2 step(float2 z);
extern "C" __global__ void escape_time(int* counts, int width, int height, int limit) {
    int px = blockIdx.x * blockDim.x + threadIdx.x, py = blockIdx.y * blockDim.y + threadIdx.y;
    if (px >= width || py >= height) return;
    float2 c = make_float2(-2.0f + 3.0f * px / width, -1.5f + 3.0f * py / height);
    float2 z = make_float2(0.0f, 0.0f);
    int k = 0;
    for (; k < limit && z.x * z.x + z.y * z.y <= 4.0f; ++k) {
        float2 f = step(z);
        z = make_float2(f.x + c.x, f.y + c.y);
    }
    counts[py * width + px] = k;
}
)";
static const char* kSquare = R"(
__device__ float2 step(float2 z) { return make_float2(z.x * z.x - z.y * z.y, 2.0f * z.x * z.y); }
)";
static const char* kCube = R"(
__device__ float2 step(float2 z) {
    float x2 = z.x * z.x, y2 = z.y * z.y;
    return make_float2(z.x * (x2 - 3.0f * y2), z.y * (3.0f * x2 - y2));
}
)";

namespace {

using namespace cudacore;

struct Complex {
    float x, y;
};

// The same iteration on the CPU, for a few points, to check the GPU's counts.
int escape_time_cpu(bool cube, int px, int py, int width, int height, int limit) {
    const Complex c{-2.0f + 3.0f * px / width, -1.5f + 3.0f * py / height};
    Complex z{0, 0};
    int k = 0;
    for (; k < limit && z.x * z.x + z.y * z.y <= 4.0f; ++k) {
        Complex f;
        if (cube) {
            const float x2 = z.x * z.x, y2 = z.y * z.y;
            f = {z.x * (x2 - 3.0f * y2), z.y * (3.0f * x2 - y2)};
        } else {
            f = {z.x * z.x - z.y * z.y, 2.0f * z.x * z.y};
        }
        z = {f.x + c.x, f.y + c.y};
    }
    return k;
}

}  // namespace

int main() try {
    if (!system::driver_available() || system::device_count() == 0) {
        std::printf("skipped: no CUDA driver or GPU on this machine\n");
        return 0;
    }
    Device device(0);
    Stream stream = device.create_stream();
    ProgramOptions options{.arch = device.arch()};
    options.relocatable_device_code = true;   // the kernel's step() is defined elsewhere
    options.fma = false;                      // the CPU check rounds each operation apart
    ObjectCode kernel_ir = Program(kKernel, SourceType::cxx, options).compile(CodeType::ltoir);

    const int width = 256, height = 256, limit = 64;
    Buffer counts = device.allocate(width * height * sizeof(int), stream);
    std::vector<int> host(width * height);
    int mismatches = 0, sampled = 0;
    for (bool cube : {false, true}) {
        ObjectCode step_ir =
            Program(cube ? kCube : kSquare, SourceType::cxx, options).compile(CodeType::ltoir);
        ObjectCode linked =
            Linker({kernel_ir, step_ir},
                   {.arch = device.arch(), .link_time_optimization = true, .fma = false})
                .link();
        launch(stream, LaunchConfig{.grid = {width / 16, height / 16}, .block = {16, 16}},
               linked.get_kernel("escape_time"), counts, width, height, limit);
        counts.copy_to(host, stream);
        stream.sync();
        long inside = 0;
        for (int v : host) inside += v == limit;
        for (int py = 0; py < height; py += 17)
            for (int px = 0; px < width; px += 13, ++sampled)
                if (host[py * width + px] != escape_time_cpu(cube, px, py, width, height, limit))
                    ++mismatches;
        std::printf("z^%d + c: %ld of %d points stay bounded (%zu-byte cubin)\n", cube ? 3 : 2,
                    inside, width * height, linked.size());
    }
    // Points on the set's boundary are chaotic: one rounding apart changes their count, so a few
    // may differ; a wrong link (the other step()) changes the counts of many more.
    std::printf("%d of %d sampled points differ from the CPU's iteration\n", mismatches, sampled);
    return mismatches * 50 <= sampled ? 0 : 1;
} catch (const cudacore::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
}
