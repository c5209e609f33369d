// SAXPY for float and double from one templated kernel: the name expressions "saxpy<float>" and
// "saxpy<double>" make NVRTC instantiate both and give their lowered names; TypedKernel checks
// the argument types at compile time. Mirrors cuda.core's examples/saxpy.py.
#include <cudacore/cudacore.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

static const char* kSource = R"(
template <typename T>
__global__ void saxpy(const T a, const T* x, const T* y, T* out, size_t n) {
    const unsigned tid = threadIdx.x + blockIdx.x * blockDim.x;
    for (size_t i = tid; i < n; i += gridDim.x * blockDim.x) out[i] = a * x[i] + y[i];
}
)";

namespace {

using namespace cudacore;

// Runs saxpy<T> on n elements and returns how many results differ from the CPU's.
template <class T>
std::size_t run(const Device& device, const Stream& stream, const Kernel& kernel, std::size_t n) {
    TypedKernel<void(T, const T*, const T*, T*, std::size_t)> saxpy(kernel);
    std::vector<T> x(n), y(n), out(n);
    for (std::size_t i = 0; i < n; ++i) {
        x[i] = T(i % 1000) / T(7);
        y[i] = T(1) - T(i % 13);
    }
    Buffer dx = device.allocate(n * sizeof(T), stream);
    Buffer dy = device.allocate(n * sizeof(T), stream);
    Buffer dout = device.allocate(n * sizeof(T), stream);
    dx.copy_from(x, stream);
    dy.copy_from(y, stream);
    const T a = T(10);
    launch(stream, LaunchConfig{.grid = 64, .block = 256}, saxpy, a,
           static_cast<const T*>(dx.data()), static_cast<const T*>(dy.data()),
           static_cast<T*>(dout.data()), n);
    dout.copy_to(out, stream);
    stream.sync();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const T expected = a * x[i] + y[i];
        if (std::fabs(out[i] - expected) > T(1e-5) * std::fabs(expected) + T(1e-6)) ++wrong;
    }
    return wrong;
}

}  // namespace

int main() try {
    if (!system::driver_available() || system::device_count() == 0) {
        std::printf("skipped: no CUDA driver or GPU on this machine\n");
        return 0;
    }
    Device device(0);
    Stream stream = device.create_stream();
    Program program(kSource, SourceType::cxx, {.name = "saxpy.cu", .arch = device.arch()});
    ObjectCode code = program.compile(CodeType::cubin, {"saxpy<float>", "saxpy<double>"});
    for (const char* name : {"saxpy<float>", "saxpy<double>"})
        std::printf("%s is %s in the cubin\n", name, code.symbol_map().at(name).c_str());

    const std::size_t n = 1 << 20;
    const std::size_t wrong_float = run<float>(device, stream, code.get_kernel("saxpy<float>"), n);
    const std::size_t wrong_double =
        run<double>(device, stream, code.get_kernel("saxpy<double>"), n);
    std::printf("saxpy<float>: %zu wrong, saxpy<double>: %zu wrong\n", wrong_float, wrong_double);
    return wrong_float == 0 && wrong_double == 0 ? 0 : 1;
} catch (const cudacore::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
}
