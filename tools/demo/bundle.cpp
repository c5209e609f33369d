// `cudacore demo`: The bundle step: a kernel that includes <cuda/std/cmath> compiled from a header bundle file
// (no include path), giving the same cubin as from the toolkit's folder.
#include "demo.hpp"

#include "cudacore/program_options.hpp"
#include "cudacore/header_bundle.hpp"
#include "cudacore/program.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace cudacore::cli::demo {

namespace {

// Includes a toolkit header, so it compiles only where the headers are: from the toolkit's
// folder, or from a bundle of them.
constexpr const char* kBundledSource = R"(
#include <cuda/std/cmath>
extern "C" __global__ void bundled_abs_saxpy(float a, const float* x, float* y, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * cuda::std::fabs(x[i]) + y[i];
}
)";

}  // namespace

void step_bundle(Demo& demo) {
    std::printf("== bundle (headers carried in memory: no include path, no toolkit on disk)\n");
    std::vector<fs::path> toolkit_folders;
    for (const std::string& dir : toolkit_include_dirs()) toolkit_folders.emplace_back(dir);
    const fs::path path = demo.scratch_path() / "cuda_std.ccbundle";
    HeaderBundle::from_include_folders({"cuda/std/cmath"}, toolkit_folders, "cuda_std",
                                       {.archs = {demo.arch}})
        .save(path);
    const HeaderBundle bundle = HeaderBundle::load(path);
    std::printf("<cuda/std/cmath> and what it includes: %zu headers, %.1f MiB, %ju bytes as a file\n",
                bundle.size(), static_cast<double>(bundle.content_size()) / (1 << 20),
                static_cast<std::uintmax_t>(fs::file_size(path)));

    ProgramOptions options;
    options.arch = demo.arch;
    options.name = "bundled_abs_saxpy";
    // In memory on both sides, with the same flags: with pch unset the bundle would be written to
    // a folder of the cache and compiled with automatic PCH, and the demo leaves no cache behind.
    options.pch = false;
    const ObjectCode from_toolkit =
        Program(kBundledSource, SourceType::cxx, options).compile(CodeType::cubin);
    options.header_bundles = {bundle};
    const auto start = std::chrono::steady_clock::now();
    const ObjectCode from_bundle =
        Program(kBundledSource, SourceType::cxx, options).compile(CodeType::cubin);
    const bool same = from_bundle.code() == from_toolkit.code();
    std::printf("compiled from the bundle in %.1f ms; cubin equal to the toolkit folder's: %s\n",
                milliseconds_since(start), demo.outcomes.verify("bundle", same));

    std::printf("-- launch the kernel compiled from the bundle\n");
    if (!gpu_for(demo, "bundled launch", "launching needs a GPU")) return;
    const Kernel kernel = from_bundle.get_kernel("bundled_abs_saxpy");
    demo.outcomes.verify("bundled launch",
                         launch_and_compare(*demo.device, kernel, abs_saxpy_on_cpu));
}

}  // namespace cudacore::cli::demo
