// One compiled artefact for every GPU in a fleet: a kernel compiled for sm_80, sm_90 and sm_100
// (cubins) and compute_90 (PTX, for GPUs newer than any cubin) in one call, the targets compiled
// in parallel, built into one fatbin with nvFatbin. The fatbin is listed, shipped as a serialized
// value, and loaded: the driver picks this GPU's cubin, or compiles the PTX.
#include <cudacore/cudacore.hpp>

#include <cstdio>
#include <vector>

static const char* kSource = R"(
template <typename T>
__global__ void axpy(T a, const T* x, T* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
)";

int main() try {
    using namespace cudacore;
    // No GPU needed to build it: NVRTC and nvFatbin run on the CPU.
    const Program program(kSource, SourceType::cxx, {.name = "axpy.cu"});
    const ObjectCode built =
        compile_fatbin(program, {"sm_80", "sm_90", "sm_100", "compute_90"}, {"axpy<float>"});
    std::printf("fatbin %s: %zu bytes\n", built.name().c_str(), built.size());
    for (const FatbinEntry& image : inspect_code(built).entries)
        std::printf("  %-5s %-10s %6zu bytes%s\n", image.kind.c_str(), image.arch.c_str(), image.size,
                    image.compressed ? " (compressed)" : "");

    // What a build machine ships and a GPU machine receives: the serialized value.
    const ObjectCode fatbin = ObjectCode::deserialize(built.serialize());

    if (!system::driver_available() || system::device_count() == 0) {
        std::printf("skipped: no CUDA driver or GPU on this machine to load the fatbin\n");
        return 0;
    }
    Device device(0);
    Stream stream = device.create_stream();
    Kernel axpy = fatbin.get_kernel("axpy<float>");
    const int n = 1 << 20;
    std::vector<float> x(n), y(n);
    for (int i = 0; i < n; ++i) {
        x[i] = float(i % 1000);
        y[i] = 1.0f;
    }
    Buffer dx = device.allocate(n * sizeof(float), stream);
    Buffer dy = device.allocate(n * sizeof(float), stream);
    dx.copy_from(x, stream);
    dy.copy_from(y, stream);
    launch(stream, LaunchConfig{.grid = unsigned((n + 255) / 256), .block = 256}, axpy, 2.0f, dx, dy, n);
    dy.copy_to(y, stream);
    stream.sync();
    int wrong = 0;
    for (int i = 0; i < n; ++i)
        if (y[i] != 2.0f * float(i % 1000) + 1.0f) ++wrong;
    std::printf("axpy on %s (binary version %d) from the fatbin: %d of %d wrong\n",
                device.arch().c_str(), axpy.binary_version(device), wrong, n);
    return wrong == 0 ? 0 : 1;
} catch (const cudacore::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
}
