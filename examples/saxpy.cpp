// SAXPY with cudacore: compile CUDA C++ at run time, load it lazily, launch it with checked
// arguments, time it with events, and check the result on the CPU. Mirrors cuda.core's
// examples/saxpy.py (saxpy_templates.cpp shows its templates and name expressions).
//
//     cmake --build build --target example_saxpy && ./build/examples/example_saxpy
#include <cudacore/cudacore.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

static const char* kSource = R"(
extern "C" __global__ void saxpy(float a, const float* x, float* y, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
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

    // Compile for this device (NVRTC). The ObjectCode is a plain value: nothing is loaded yet.
    ProgramOptions options;
    options.name = "saxpy";
    options.arch = device.arch();
    ObjectCode code = Program(kSource, SourceType::cxx, options).compile(CodeType::cubin);

    // The first get_kernel loads the code; the TypedKernel checks the signature once.
    TypedKernel<void(float, const float*, float*, std::size_t)> saxpy(code.get_kernel("saxpy"));

    const std::size_t n = 1 << 20;
    std::vector<float> x(n), y(n);
    for (std::size_t i = 0; i < n; ++i) {
        x[i] = float(i % 1000) * 0.001f;
        y[i] = 1.0f;
    }
    Buffer dx = device.allocate(n * sizeof(float), stream);
    Buffer dy = device.allocate(n * sizeof(float), stream);
    dx.copy_from(x, stream);
    dy.copy_from(y, stream);

    const float a = 3.0f;
    Event start = stream.record(EventOptions{.timing_enabled = true});
    launch(stream, LaunchConfig{.grid = unsigned((n + 255) / 256), .block = 256}, saxpy, a,
           static_cast<const float*>(dx.data()), static_cast<float*>(dy.data()), n);
    Event end = stream.record(EventOptions{.timing_enabled = true});

    std::vector<float> result(n);
    dy.copy_to(result, stream);
    stream.sync();

    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i)
        if (std::fabs(result[i] - (a * x[i] + y[i])) > 1e-5f) ++wrong;
    std::printf("saxpy on %zu floats: %.3f ms, %zu mismatches\n", n, (end - start).count(), wrong);
    return wrong == 0 ? 0 : 1;
} catch (const cudacore::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
}
