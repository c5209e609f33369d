// Side-by-side timings, C++ half: every operation of the comparison timed through the raw driver
// and NVRTC calls and through cudacore, in one run. The raw calls go through the same run-time
// loaded tables cudacore uses (detail::driver(), detail::nvrtc()), so both sides call the very
// same driver and compiler functions. bench/side_by_side.py runs this program, adds cuda.core
// and CuPy, and prints the table.
//
// Output: one JSON object per line on stdout.
//   {"environment": {...}}                                          first: GPU, driver, arch, flags
//   then the rows' lines (harness.hpp), and {"error": ...} if the set-up failed.
// Each figure is the median of R repetitions after warm-up; raw and cudacore repetitions
// alternate (and swap order) so that drift (clocks, caches, other load) hits both alike. Tiny
// operations are timed in batches and reported per operation. Without a GPU only the CPU-only
// operations run (compile, caches, ObjectCode from bytes, serialization); the others are
// reported skipped with the reason. Each area is one file (areas.hpp).
//
//   side_by_side [--quick] [--only OP,OP...]
#include "bench_support.hpp"
#include "side_by_side/areas.hpp"
#include "side_by_side/kernels.hpp"

#include "cudacore/object_code.hpp"
#include "cudacore/program_options.hpp"
#include "cudacore/program.hpp"
#include "cudacore/system.hpp"
#include "cudacore/version.hpp"
#include "loader/compiler_apis.hpp"

#include <CLI/CLI.hpp>

#include <exception>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>
#include <unistd.h>

namespace cudacore::bench::side_by_side {

namespace {

// A private directory for the disk cache, removed at exit.
struct TempDirectory {
    std::filesystem::path path = std::filesystem::temp_directory_path() /
                                 ("cudacore-side-by-side-" + std::to_string(::getpid()));
    ~TempDirectory() {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
    }
};

json environment(const std::string& arch, const std::string& missing_gpu) {
    json info = {{"cudacore_version", version()},
                 {"built_cuda_version", system::built_cuda_version()},
                 {"arch", arch},
                 {"gpu", nullptr},
                 {"driver_version", nullptr},
                 {"no_gpu_reason", missing_gpu.empty() ? json(nullptr) : json(missing_gpu)},
                 {"launch_burst", launch_burst},
                 {"launch_block", launch_block}};
    if (missing_gpu.empty()) {
        const Device device(0);
        info["gpu"] = device.name();
        info["driver_version"] = system::driver_version();
    }
    try {
        const auto& nvrtc = detail::nvrtc();
        info["nvrtc_version"] = std::to_string(nvrtc.major) + "." + std::to_string(nvrtc.minor);
        info["nvrtc_path"] = nvrtc.path;
    } catch (const std::exception& error) {
        info["nvrtc_version"] = nullptr;
        info["nvrtc_error"] = error.what();
    }
    info["include_dirs"] = toolkit_include_dirs();
    try {
        info["flags"] = Program(small_source, SourceType::cxx, options_for(arch, "flags"))
                            .flags(CodeType::cubin);
    } catch (const std::exception& error) {
        info["flags_error"] = error.what();
    }
    return info;
}

// Every area in row order; the GPU areas only where there is a GPU, else their rows are skipped.
void run_areas(Runner& runner, const std::string& arch, const std::string& missing_gpu) {
    TempDirectory cache_dir;
    for (const KernelSource& kernel : compiled_kernels()) {
        compile_operations(runner, arch, kernel);
        cache_hit_operations(runner, arch, kernel, cache_dir.path);
    }
    specialization_operations(runner, arch);
    const std::string launch_cubin(
        Program(launch_source, SourceType::cxx, options_for(arch, "side_by_side_launch.cu"))
            .compile(CodeType::cubin)
            .code());
    object_code_operations(runner, launch_cubin);
    if (!missing_gpu.empty()) {
        for (const auto* names : {&launch_operation_names, &event_operation_names,
                                  &memory_operation_names, &graph_operation_names,
                                  &signal_operation_names})
            for (const auto& operation : *names) runner.skip(operation, {"raw", "cudacore"}, missing_gpu);
        return;
    }
    const Device device(0);
    device.set_current();
    {
        const Stream stream = device.create_stream();
        launch_operations(runner, device, stream, launch_cubin);
        event_operations(runner, device, stream, launch_cubin);
        memory_operations(runner, device, stream);
    }
    graph_operations(runner, device, launch_cubin);
    signal_operations(runner, device);
}

}  // namespace

}  // namespace cudacore::bench::side_by_side

int main(int argc, char** argv) {
    namespace side_by_side = cudacore::bench::side_by_side;
    CLI::App app{"Times each operation through the raw driver / NVRTC calls and through cudacore; "
                 "prints JSON lines (see bench/side_by_side.py)."};
    bool quick = false;
    std::vector<std::string> only;
    app.add_flag("--quick", quick, "a few repetitions only (for smoke tests)");
    app.add_option("--only", only, "run only these operations")->delimiter(',');
    CLI11_PARSE(app, argc, argv);
    side_by_side::Runner runner(quick, {only.begin(), only.end()});

    const std::string missing_gpu = cudacore::bench::gpu_missing_reason();
    // Without a GPU, compile for an H100 (the machine the table is made on).
    std::string arch = "sm_90";
    if (missing_gpu.empty()) arch = cudacore::Device(0).arch();
    side_by_side::emit({{"environment", side_by_side::environment(arch, missing_gpu)}});

    try {
        side_by_side::run_areas(runner, arch, missing_gpu);
    } catch (const std::exception& error) {
        // Set-up failed (no NVRTC, no context...): say so in the stream the script reads.
        side_by_side::emit({{"error", error.what()}});
        return 1;
    }
    return 0;
}
