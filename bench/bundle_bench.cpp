// Compiling from a header bundle against compiling from the toolkit's include folder: the same
// kernels (<cuda/std/cmath>, cuda_fp16.h, cooperative_groups.h), the same flags, in alternating
// rounds in one process, with the ratio. No GPU needed (NVRTC runs on the CPU).
//
//   build/bench/bundle_bench [--rounds 5]
//
// Rows:
//   - first kernel: a fresh Program each round, NVRTC's automatic PCH off on both sides (a bundle
//     turns it off: NVRTC's PCH is keyed by files on disk, and in-memory headers have none), so
//     the row compares the header text's source, memory against the file system;
//   - second kernel, same headers: the toolkit side with automatic PCH on (the first kernel of the
//     round made the PCH, the second reuses it), the bundle side without: what a deployment gives
//     up by not reading headers from disk;
//   - making the bundle (the closure of the three headers) and its size, compressed and not.
#include "bench_support.hpp"
#include "cudacore/header_bundle.hpp"
#include "cudacore/program.hpp"
#include "cudacore/program_options.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <string>
#include <vector>

namespace {

using namespace cudacore;

constexpr const char* kFirstSource = R"(
#include <cuda/std/cmath>
#include <cuda_fp16.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void first(const float* in, __half* out, int n) {
    auto block = cg::this_thread_block();
    int i = static_cast<int>(block.group_index().x * block.size() + block.thread_rank());
    if (i < n) out[i] = __float2half(cuda::std::sqrt(cuda::std::fabs(in[i])));
}
)";

constexpr const char* kSecondSource = R"(
#include <cuda/std/cmath>
#include <cuda_fp16.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void second(const __half* in, float* out, int n) {
    auto warp = cg::tiled_partition<32>(cg::this_thread_block());
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? cuda::std::exp(__half2float(in[i])) : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) v += warp.shfl_down(v, offset);
    if (warp.thread_rank() == 0 && i < n) out[i / 32] = v;
}
)";

double seconds_of(const std::function<void()>& work) {
    const auto start = std::chrono::steady_clock::now();
    work();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::size_t compile(const char* source, const char* name, const ProgramOptions& options) {
    ProgramOptions named = options;
    named.name = name;
    return Program(source, SourceType::cxx, named).compile(CodeType::cubin).size();
}

void row(const char* what, double toolkit, double bundle) {
    std::printf("| %-44s | %9.1f ms | %9.1f ms | %6.3f |\n", what, toolkit * 1e3, bundle * 1e3,
                bundle / toolkit);
}

}  // namespace

int main(int argc, char** argv) {
    int rounds = 5;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
            rounds = std::max(1, std::atoi(argv[++i]));
        } else {
            std::fprintf(stderr, "usage: bundle_bench [--rounds N]\n");
            return 2;
        }
    }
    try {
        std::vector<std::filesystem::path> folders;
        for (const std::string& dir : toolkit_include_dirs()) folders.emplace_back(dir);
        HeaderBundle bundle;
        const double make_seconds = seconds_of([&] {
            bundle = HeaderBundle::from_include_folders(
                {"cuda/std/cmath", "cuda_fp16.h", "cooperative_groups.h"}, folders, "cuda_std");
        });
        const std::string file = bundle.serialize();

        ProgramOptions common;
        common.arch = "sm_90";
        ProgramOptions toolkit_no_pch = common;
        toolkit_no_pch.pch = false;
        ProgramOptions toolkit_pch = common;  // automatic PCH, the default for C++ programs
        ProgramOptions from_bundle = common;
        from_bundle.header_bundles = {bundle};

        // Both sides must compile the same code before anything is timed.
        const std::size_t toolkit_size = compile(kFirstSource, "first", toolkit_no_pch);
        const std::size_t bundle_size = compile(kFirstSource, "first", from_bundle);
        std::vector<double> first_toolkit, first_bundle, second_toolkit, second_bundle;
        for (int round = 0; round < rounds; ++round) {
            // Alternate which side goes first, so neither always meets a warm cache.
            const bool toolkit_first = round % 2 == 0;
            for (int side = 0; side < 2; ++side) {
                if ((side == 0) == toolkit_first) {
                    first_toolkit.push_back(
                        seconds_of([&] { compile(kFirstSource, "first", toolkit_no_pch); }));
                    // Automatic PCH: this program's first compile makes it, the second uses it.
                    compile(kFirstSource, "first", toolkit_pch);
                    second_toolkit.push_back(
                        seconds_of([&] { compile(kSecondSource, "second", toolkit_pch); }));
                } else {
                    first_bundle.push_back(
                        seconds_of([&] { compile(kFirstSource, "first", from_bundle); }));
                    second_bundle.push_back(
                        seconds_of([&] { compile(kSecondSource, "second", from_bundle); }));
                }
            }
        }
        std::printf("bundle of <cuda/std/cmath>, cuda_fp16.h, cooperative_groups.h: %zu headers, "
                    "%.1f MiB of text, %.1f KiB as a file (zstd), made in %.0f ms\n",
                    bundle.size(), static_cast<double>(bundle.content_size()) / (1 << 20),
                    static_cast<double>(file.size()) / 1024, make_seconds * 1e3);
        std::printf("cubin: %zu bytes from the toolkit's folder, %zu from the bundle\n",
                    toolkit_size, bundle_size);
        std::printf("median of %d alternating rounds, sm_90 cubin\n\n", rounds);
        std::printf("| %-44s | %12s | %12s | %6s |\n", "compile", "toolkit", "bundle", "ratio");
        std::printf("|---|---|---|---|\n");
        row("first kernel (automatic PCH off on both)", bench::median(first_toolkit), bench::median(first_bundle));
        row("second kernel (toolkit: automatic PCH on)", bench::median(second_toolkit),
            bench::median(second_bundle));
        return 0;
    } catch (const std::exception& error) {
        std::printf("bundle_bench: %s\n", error.what());
        return 1;
    }
}
