// The areas of the side-by-side program, one file each (code, cache, launch, events, memory,
// graphs). main.cpp runs them in the order the rows have always been measured in: keep it, so
// that a run stays comparable with the earlier ones in bench/RESULTS.md.
#pragma once

#include "side_by_side/harness.hpp"

#include "cudacore/device.hpp"
#include "cudacore/program_options.hpp"
#include "cudacore/stream.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace cudacore::bench::side_by_side {

// Launches per timed burst (well below the launch queue depth) and threads per block, in every
// launch row; bench/side_by_side.py reads both from the environment line.
inline constexpr int launch_burst = 64;
inline constexpr unsigned launch_block = 32;

// The arguments of launch_source's `eight` kernel (kernels.hpp) as the raw side passes them, in
// the launch and graph rows; its pointers stay null unless a row gives it memory (the kernel
// reads them only in a thread that never runs).
struct EightArguments {
    int a = 1;
    double b = 2;
    CUdeviceptr in = 0;
    signed char c = 3;
    unsigned long long u = 4;
    float f = 5;
    short s = 6;
    CUdeviceptr out = 0;
};

// The options every area compiles with: the target architecture and the program's name.
ProgramOptions options_for(const std::string& arch, const std::string& name);

// A kernel of the compile and cache-hit rows.
struct KernelSource {
    std::string label;  // "small", "cuda_std": the rows' suffix
    const char* source;
    std::vector<std::string> name_expressions;
    Plan compile_plan;
};

// The kernels of the compile and cache-hit rows, in row order.
std::vector<KernelSource> compiled_kernels();

// code.cpp (no GPU): compile_<label> for one kernel.
void compile_operations(Runner& runner, const std::string& arch, const KernelSource& kernel);
// code.cpp: 32 specializations in one compile; a second kernel reusing the first one's headers.
void specialization_operations(Runner& runner, const std::string& arch);
// code.cpp: ObjectCode from bytes; serialize + deserialize.
void object_code_operations(Runner& runner, const std::string& launch_cubin);

// cache.cpp (no GPU): memory and disk cache hits for one kernel, the disk cache in `cache_dir`.
void cache_hit_operations(Runner& runner, const std::string& arch, const KernelSource& kernel,
                          const std::filesystem::path& cache_dir);

// launches.cpp (GPU): get_kernel first and repeated; launches enqueued and round trips.
void launch_operations(Runner& runner, const Device& device, const Stream& stream,
                       const std::string& launch_cubin);
extern const std::vector<std::string> launch_operation_names;

// events.cpp (GPU): create, create + destroy, elapsed time.
void event_operations(Runner& runner, const Device& device, const Stream& stream,
                      const std::string& launch_cubin);
extern const std::vector<std::string> event_operation_names;

// memory.cpp (GPU): stream-ordered allocate + free.
void memory_operations(Runner& runner, const Device& device, const Stream& stream);
extern const std::vector<std::string> memory_operation_names;

// graphs.cpp (GPU): launches, replays and capture + instantiate of 1, 16 and 256 kernels, on a
// stream of its own.
void graph_operations(Runner& runner, const Device& device, const std::string& launch_cubin);
extern const std::vector<std::string> graph_operation_names;

// signals.cpp (GPU): an event record + wait pair and a stream write + wait pair between two
// streams of their own.
void signal_operations(Runner& runner, const Device& device);
extern const std::vector<std::string> signal_operation_names;

}  // namespace cudacore::bench::side_by_side
