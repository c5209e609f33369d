// The two kernels the cache benchmarks compile and look up (cache_bench, remote_cache_bench): a
// small one, and one that includes <cuda/std> headers, whose key covers every header it read.
#pragma once

#include "cudacore/program.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace cudacore::bench {

inline const char* const small_source = R"(
extern "C" __global__ void scale(float* data, float factor, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] *= factor;
}
)";

inline const char* const cuda_std_source = R"(
#include <cuda/std/array>
#include <cuda/std/limits>
#include <cuda/std/type_traits>
template <typename T>
__global__ void fill(T* out, int n) {
    static_assert(cuda::std::is_floating_point_v<T>);
    cuda::std::array<T, 4> table{T(1), T(2), T(3), T(4)};
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = table[i % table.size()] + cuda::std::numeric_limits<T>::epsilon();
}
)";

// A kernel of a project folder that includes the project's own header (include/bench_value.h,
// written by make_program): a lookup reads the header's bytes.
inline const char* const project_source = R"(
#include "bench_value.h"
extern "C" __global__ void apply(float* data, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] = bench_value(data[i]);
}
)";

// The program for `source`, for sm_90 (what the H100 runs; NVRTC compiles it on any machine).
// The project kernel's folder is made, once per process, in the temporary directory.
inline Program make_program(const char* source) {
    ProgramOptions options;
    options.arch = "sm_90";
    options.name = "bench.cu";
    if (source == project_source) {
        static const struct Folder {  // removed at exit
            std::filesystem::path root = std::filesystem::temp_directory_path() /
                                         ("cudacore-bench-project-" + std::to_string(::getpid()));
            Folder() {
                std::filesystem::create_directories(root / "include");
                std::ofstream(root / "include" / "bench_value.h")
                    << "#pragma once\n__device__ inline float bench_value(float x) { return 2.0f * x + 1.0f; }\n";
            }
            ~Folder() {
                std::error_code ignored;
                std::filesystem::remove_all(root, ignored);
            }
        } project;
        const std::string folder = project.root.string();
        options.name = folder + "/bench.cu";
        options.include_path = {folder + "/include"};
    }
    return Program(source, SourceType::cxx, options);
}

}  // namespace cudacore::bench
