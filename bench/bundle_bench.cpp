// Compiling from a header bundle against compiling from the toolkit's include folder: the same
// kernels (<cuda/std/cmath>, cuda_fp16.h, cooperative_groups.h), the same flags, in alternating
// rounds in one process, with the ratio. No GPU needed (NVRTC runs on the CPU).
//
//   build/bench/bundle_bench [--rounds 5] [--trace DIR]
//
// The bundle's folder (HeaderBundle::folder()) goes to a temporary cache folder of the bench's
// own ($CUDACORE_CACHE_DIR for this process), removed at the end. Rows:
//   - first kernel, PCH off on both sides (a bundle with pch = false stays in memory): the header
//     text's source, memory against the file system;
//   - second kernel, toolkit with automatic PCH, bundle in memory without it: what a deployment
//     gave up before bundles had folders;
//   - first and second kernel with PCH on both sides, the bundle read from its folder (made
//     before the rounds): each round gives both sides a fresh PCH folder (ProgramOptions::
//     pch_dir), so the first kernel makes the PCH and the second uses it, as in a new process;
//     the second kernels of the two sides then take turns, five each per round;
//   - making the bundle (the closure of the three headers), writing its folder once, and the
//     check of the folder every compile makes.
// --trace DIR: the last round's compiles with PCH also write NVRTC's time trace
// (--fdevice-time-trace) to DIR/{toolkit,bundle}-{first,second}.json, to see where the two
// sides differ.
#include "bench_support.hpp"
#include "cudacore/header_bundle.hpp"
#include "cudacore/program.hpp"
#include "cudacore/program_options.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdlib.h>
#include <exception>
#include <functional>
#include <stdexcept>
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

// Second kernels compiled per round and side with PCH, taking turns.
constexpr int kSecondRepeats = 5;

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
    std::printf("| %-50s | %9.1f ms | %9.1f ms | %6.3f |\n", what, toolkit * 1e3, bundle * 1e3,
                bundle / toolkit);
}

}  // namespace

int main(int argc, char** argv) {
    int rounds = 5;
    std::string trace_dir;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
            rounds = std::max(1, std::atoi(argv[++i]));
        } else if (std::strcmp(argv[i], "--trace") == 0 && i + 1 < argc) {
            trace_dir = argv[++i];
        } else {
            std::fprintf(stderr, "usage: bundle_bench [--rounds N] [--trace DIR]\n");
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

        // A cache folder of the bench's own: the first folder() call writes the folder.
        std::string scratch = (std::filesystem::temp_directory_path() / "bundle-bench-XXXXXX").string();
        if (::mkdtemp(scratch.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + scratch);
        const std::filesystem::path scratch_path(scratch);
        ::setenv("CUDACORE_CACHE_DIR", (scratch_path / "cache").c_str(), 1);
        const double folder_make_seconds = seconds_of([&] { bundle.folder(); });
        std::vector<double> folder_check;
        for (int i = 0; i < 5; ++i) folder_check.push_back(seconds_of([&] { bundle.folder(); }));

        ProgramOptions common;
        common.arch = "sm_90";
        ProgramOptions toolkit_no_pch = common;
        toolkit_no_pch.pch = false;
        ProgramOptions toolkit_pch = common;  // automatic PCH, the default for C++ programs
        ProgramOptions from_memory = common;
        from_memory.header_bundles = {bundle};
        from_memory.pch = false;  // in memory, without PCH
        ProgramOptions from_folder = common;
        from_folder.header_bundles = {bundle};  // pch unset: the bundle's folder, automatic PCH

        // Every side must compile the same code before anything is timed.
        const std::size_t toolkit_size = compile(kFirstSource, "first", toolkit_no_pch);
        const std::size_t bundle_size = compile(kFirstSource, "first", from_memory);
        const std::size_t folder_size = compile(kFirstSource, "first", from_folder);
        std::vector<double> first_toolkit, first_bundle, second_toolkit, second_bundle;
        std::vector<double> pch_first_toolkit, pch_first_folder, pch_second_toolkit, pch_second_folder;
        // A fresh PCH folder: the first kernel compiled with it makes the PCH.
        int pch_folders = 0;
        auto fresh_pch = [&](ProgramOptions options) {
            const std::filesystem::path dir = scratch_path / ("pch-" + std::to_string(pch_folders++));
            std::filesystem::create_directories(dir);
            options.pch_dir = dir.string();
            return options;
        };
        // With --trace, the last round's PCH compiles write a trace each (a file of its own: a
        // trace file left by an earlier compile makes ptxas fail).
        auto traced = [&](ProgramOptions options, int round, const char* what) {
            if (!trace_dir.empty() && round == rounds - 1)
                options.fdevice_time_trace = trace_dir + "/" + what;
            return options;
        };
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
                        seconds_of([&] { compile(kFirstSource, "first", from_memory); }));
                    second_bundle.push_back(
                        seconds_of([&] { compile(kSecondSource, "second", from_memory); }));
                }
            }
            // PCH on both sides, each in a fresh folder: the first kernels make the PCHs; then the
            // second kernels take turns, kSecondRepeats each, so that both meet the same load on
            // a host whose speed drifts (a second kernel is short: one slow moment is 20%).
            const ProgramOptions own_toolkit = fresh_pch(toolkit_pch);
            const ProgramOptions own_folder = fresh_pch(from_folder);
            for (int side = 0; side < 2; ++side) {
                if ((side == 0) == toolkit_first)
                    pch_first_toolkit.push_back(seconds_of([&] {
                        compile(kFirstSource, "first", traced(own_toolkit, round, "toolkit-first"));
                    }));
                else
                    pch_first_folder.push_back(seconds_of([&] {
                        compile(kFirstSource, "first", traced(own_folder, round, "bundle-first"));
                    }));
            }
            for (int repeat = 0; repeat < kSecondRepeats; ++repeat) {
                const int traced_round = repeat == 0 ? round : -1;
                for (int side = 0; side < 2; ++side) {
                    if ((side == 0) == toolkit_first)
                        pch_second_toolkit.push_back(seconds_of([&] {
                            compile(kSecondSource, "second", traced(own_toolkit, traced_round, "toolkit-second"));
                        }));
                    else
                        pch_second_folder.push_back(seconds_of([&] {
                            compile(kSecondSource, "second", traced(own_folder, traced_round, "bundle-second"));
                        }));
                }
            }
        }
        std::printf("bundle of <cuda/std/cmath>, cuda_fp16.h, cooperative_groups.h: %zu headers, "
                    "%.1f MiB of text, %.1f KiB as a file (zstd), made in %.0f ms\n",
                    bundle.size(), static_cast<double>(bundle.content_size()) / (1 << 20),
                    static_cast<double>(file.size()) / 1024, make_seconds * 1e3);
        std::printf("its folder: written once in %.0f ms, checked by every compile in %.2f ms\n",
                    folder_make_seconds * 1e3, bench::median(folder_check) * 1e3);
        std::printf("cubin: %zu bytes from the toolkit's folder, %zu from the bundle in memory, %zu "
                    "from its folder\n", toolkit_size, bundle_size, folder_size);
        std::printf("median of %d alternating rounds (second kernels with PCH: %d per round and "
                    "side, taking turns), sm_90 cubin\n\n", rounds, kSecondRepeats);
        std::printf("| %-50s | %12s | %12s | %6s |\n", "compile", "toolkit", "bundle", "ratio");
        std::printf("|---|---|---|---|\n");
        row("first kernel (PCH off on both; bundle in memory)", bench::median(first_toolkit),
            bench::median(first_bundle));
        row("second kernel (toolkit PCH; bundle in memory)", bench::median(second_toolkit),
            bench::median(second_bundle));
        row("first kernel, PCH on both (bundle: its folder)", bench::median(pch_first_toolkit),
            bench::median(pch_first_folder));
        row("second kernel, PCH on both (bundle: its folder)", bench::median(pch_second_toolkit),
            bench::median(pch_second_folder));
        std::filesystem::remove_all(scratch_path);
        return 0;
    } catch (const std::exception& error) {
        std::printf("bundle_bench: %s\n", error.what());
        return 1;
    }
}
