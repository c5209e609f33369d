// `cudacore demo`: The link step: two LTO-IR units, one calling a function only the other defines, linked by
// nvJitLink into one cubin, then launched where there is a GPU.
#include "demo.hpp"

#include "cudacore/code_inspection.hpp"
#include "cudacore/linker.hpp"
#include "cudacore/program.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

namespace cudacore::cli::demo {

namespace {

// Two relocatable units: the kernel calls a __device__ function that only the other unit
// defines, so nothing runs until the link resolves it (and LTO can inline it across units).
constexpr const char* kLinkedKernelSource = R"(
extern __device__ float square_add(float a, float x, float y);
extern "C" __global__ void linked_square_add(float a, const float* x, float* y, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = square_add(a, x[i], y[i]);
}
)";
constexpr const char* kLinkedFunctionSource = R"(
__device__ float square_add(float a, float x, float y) { return a * x * x + y; }
)";
constexpr const char* kLinkedKernelName = "linked_square_add";

}  // namespace

void step_link(Demo& demo) {
    std::printf("== link (two LTO-IR units -> one cubin for %s)\n", demo.arch.c_str());
    ProgramOptions options;
    options.arch = demo.arch;
    options.relocatable_device_code = true;
    auto start = std::chrono::steady_clock::now();
    options.name = "linked_kernel";
    const ObjectCode kernel_unit =
        Program(kLinkedKernelSource, SourceType::cxx, options).compile(CodeType::ltoir);
    options.name = "linked_function";
    const ObjectCode function_unit =
        Program(kLinkedFunctionSource, SourceType::cxx, options).compile(CodeType::ltoir);
    std::printf("LTO-IR: kernel unit %zu bytes + device-function unit %zu bytes in %.1f ms\n",
                kernel_unit.size(), function_unit.size(), milliseconds_since(start));

    LinkerOptions link_options;
    link_options.name = "linked";
    link_options.arch = demo.arch;
    link_options.link_time_optimization = true;
    Linker linker({kernel_unit, function_unit}, link_options);
    start = std::chrono::steady_clock::now();
    const ObjectCode linked = linker.link(CodeType::cubin);
    std::printf("linked by %s (-lto) into a %s of %zu bytes in %.1f ms\n",
                linker.backend().c_str(), std::string(to_string(linked.code_type())).c_str(),
                linked.size(), milliseconds_since(start));
    // The link is right when the cubin holds the kernel, for the arch asked for.
    const CodeInfo info = inspect_code(linked);
    const bool has_kernel = std::find(info.kernels.begin(), info.kernels.end(),
                                      kLinkedKernelName) != info.kernels.end();
    std::printf("cubin for %s holds %s: %s\n", info.arch.c_str(), kLinkedKernelName,
                demo.outcomes.verify("link", info.type == CodeType::cubin &&
                                                 info.arch == demo.arch && has_kernel));

    std::printf("-- launch the linked kernel (%s)\n", kLinkedKernelName);
    if (!gpu_for(demo, "linked launch", "launching needs a GPU")) return;
    const bool ok =
        launch_and_compare(*demo.device, linked.get_kernel(kLinkedKernelName), square_add_on_cpu);
    demo.outcomes.verify("linked launch", ok);
}

}  // namespace cudacore::cli::demo
