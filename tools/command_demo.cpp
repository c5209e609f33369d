// `cudacore demo`: the main job, end to end, saying clearly what it skipped.
//
// Steps, each a function below: devices -> compile (NVRTC, no GPU needed) -> load lazily ->
// SAXPY -> templated reduction. Without a GPU the code is still compiled (for sm_90) and the GPU
// steps print SKIPPED.
#include "commands.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/event.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/program.hpp"
#include "cudacore/system.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <random>
#include <vector>

namespace cudacore::cli {

namespace {

constexpr const char* kSaxpySource = R"(
extern "C" __global__ void saxpy(float a, const float* x, float* y, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
)";

// One partial sum per block; the host adds the partials.
constexpr const char* kReductionSource = R"(
template <typename T, int BlockSize>
__global__ void block_sum(const T* in, T* partial, size_t n) {
    __shared__ T shared[BlockSize];
    T sum = 0;
    for (size_t i = blockIdx.x * (size_t)BlockSize + threadIdx.x; i < n;
         i += (size_t)gridDim.x * BlockSize)
        sum += in[i];
    shared[threadIdx.x] = sum;
    __syncthreads();
    for (int stride = BlockSize / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) shared[threadIdx.x] += shared[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = shared[0];
}
)";
constexpr const char* kReductionName = "block_sum<float, 256>";
constexpr std::size_t kElements = std::size_t{1} << 20;

struct Demo {
    std::optional<Device> device;  // empty: no GPU, GPU steps are skipped
    std::string arch;
    std::optional<ObjectCode> saxpy;
    std::optional<ObjectCode> reduction;
};

double milliseconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
}

std::vector<float> random_floats(std::size_t n, unsigned seed) {
    std::mt19937 random(seed);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<float> values(n);
    for (float& value : values) value = uniform(random);
    return values;
}

void step_devices(Demo& demo) {
    std::printf("== devices\n");
    if (!system::driver_available()) {
        std::printf("SKIPPED: no CUDA driver on this machine; GPU steps are skipped\n");
    } else if (system::device_count() == 0) {
        std::printf("SKIPPED: the driver reports no device; GPU steps are skipped\n");
    } else {
        for (const Device& device : system::devices())
            std::printf("device %d: %s (%s)\n", device.ordinal(), device.name().c_str(),
                        device.arch().c_str());
        demo.device.emplace(0);
    }
    demo.arch = demo.device ? demo.device->arch() : "sm_90";
}

void step_compile(Demo& demo) {
    std::printf("== compile (NVRTC, cubin for %s%s)\n", demo.arch.c_str(),
                demo.device ? "" : ", no GPU needed");
    ProgramOptions options;
    options.arch = demo.arch;

    auto start = std::chrono::steady_clock::now();
    options.name = "saxpy";
    demo.saxpy = Program(kSaxpySource, SourceType::cxx, options).compile(CodeType::cubin);
    std::printf("saxpy: %zu bytes in %.1f ms\n", demo.saxpy->size(), milliseconds_since(start));

    start = std::chrono::steady_clock::now();
    options.name = "reduction";
    demo.reduction = Program(kReductionSource, SourceType::cxx, options)
                         .compile(CodeType::cubin, {kReductionName});
    std::printf("reduction: %zu bytes in %.1f ms; %s -> %s\n", demo.reduction->size(),
                milliseconds_since(start), kReductionName,
                demo.reduction->lowered_name(kReductionName).c_str());
}

void step_load(Demo& demo) {
    std::printf("== load (lazily, on first get_kernel)\n");
    if (!demo.device) {
        std::printf("SKIPPED: loading needs a GPU\n");
        return;
    }
    std::printf("saxpy loaded before first use: %s\n", demo.saxpy->is_loaded() ? "yes" : "no");
    auto start = std::chrono::steady_clock::now();
    demo.saxpy->get_kernel("saxpy");
    const double first = milliseconds_since(start);
    start = std::chrono::steady_clock::now();
    demo.saxpy->get_kernel("saxpy");
    const double second = milliseconds_since(start);
    std::printf("first get_kernel (loads): %.3f ms; second (cached): %.6f ms; loaded now: %s\n",
                first, second, demo.saxpy->is_loaded() ? "yes" : "no");
}

void step_saxpy(Demo& demo) {
    std::printf("== saxpy on %zu random floats\n", kElements);
    if (!demo.device) {
        std::printf("SKIPPED: launching needs a GPU\n");
        return;
    }
    const Device& device = *demo.device;
    Stream stream = device.create_stream();
    const std::vector<float> x = random_floats(kElements, 1);
    const std::vector<float> y = random_floats(kElements, 2);
    Buffer dx = device.allocate(kElements * sizeof(float), stream);
    Buffer dy = device.allocate(kElements * sizeof(float), stream);
    dx.copy_from(x, stream);
    dy.copy_from(y, stream);

    const float a = 2.0f;
    TypedKernel<void(float, const float*, float*, std::size_t)> saxpy(
        demo.saxpy->get_kernel("saxpy"));
    const LaunchConfig config{.grid = unsigned((kElements + 255) / 256), .block = 256};
    Event start = stream.record(EventOptions{.timing_enabled = true});
    launch(stream, config, saxpy, a, static_cast<const float*>(dx.data()),
           static_cast<float*>(dy.data()), kElements);
    Event end = stream.record(EventOptions{.timing_enabled = true});
    std::vector<float> result(kElements);
    dy.copy_to(result, stream);
    stream.sync();

    std::size_t wrong = 0;
    for (std::size_t i = 0; i < kElements; ++i)
        if (std::fabs(result[i] - (a * x[i] + y[i])) > 1e-5f) ++wrong;
    std::printf("kernel time %.3f ms (events); %zu mismatches against the CPU: %s\n",
                (end - start).count(), wrong, wrong == 0 ? "OK" : "FAILED");
    if (wrong) throw Error("demo: saxpy results differ from the CPU's");
}

void step_reduction(Demo& demo) {
    std::printf("== reduction (%s) on %zu random floats\n", kReductionName, kElements);
    if (!demo.device) {
        std::printf("SKIPPED: launching needs a GPU\n");
        return;
    }
    const Device& device = *demo.device;
    Stream stream = device.create_stream();
    const std::vector<float> values = random_floats(kElements, 3);
    const unsigned blocks = 1024;
    Buffer input = device.allocate(kElements * sizeof(float), stream);
    Buffer partial = device.allocate(blocks * sizeof(float), stream);
    input.copy_from(values, stream);

    Kernel kernel = demo.reduction->get_kernel(kReductionName);
    Event start = stream.record(EventOptions{.timing_enabled = true});
    launch(stream, LaunchConfig{.grid = blocks, .block = 256}, kernel, input, partial, kElements);
    Event end = stream.record(EventOptions{.timing_enabled = true});
    std::vector<float> partials(blocks);
    partial.copy_to(partials, stream);
    stream.sync();

    double gpu = 0, cpu = 0;
    for (float p : partials) gpu += p;
    for (float v : values) cpu += v;
    const bool ok = std::fabs(gpu - cpu) <= 1e-3 * (1.0 + std::fabs(cpu));
    std::printf("kernel time %.3f ms (events); sum %.4f, CPU %.4f: %s\n", (end - start).count(),
                gpu, cpu, ok ? "OK" : "FAILED");
    if (!ok) throw Error("demo: reduction result differs from the CPU's");
}

}  // namespace

void add_demo_command(CLI::App& app) {
    auto* command = app.add_subcommand("demo", "Run the end-to-end demo");
    command->callback([] {
        Demo demo;
        step_devices(demo);
        step_compile(demo);
        step_load(demo);
        step_saxpy(demo);
        step_reduction(demo);
    });
}

}  // namespace cudacore::cli
