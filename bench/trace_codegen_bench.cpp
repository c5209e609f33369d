// What NVRTC's time trace does to code, and what learning the headers costs a cache miss: for
// kernels where --fdevice-time-trace was seen to change the code (template recursion without
// includes, <cuda/std> math) and a saxpy, this compiles each plainly and with the trace (PTX and
// cubin bytes compared), times both on the GPU when there is one (median of 200 launches over 4M
// elements, events), and times a compile_cached miss (a plain compile with the headers learned
// by a front-end pass beside it) against a plain compile and the former way (one compile with
// the trace, without PCH). A table program; prints one row per kernel.
#include "bench_support.hpp"
#include "trace_codegen_kernels.hpp"

#include <cudacore/cudacore.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

using namespace cudacore;

namespace {

struct Case {
    const char* name;
    const char* source;
    const char* kernel;
};

constexpr Case kCases[] = {
    {"template recursion", test::kTraceRecursionSource, "run"},
    {"cuda::std math", test::kTraceMathSource, "run"},
    {"saxpy", R"(
extern "C" __global__ void run(float* out, const float* x, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.5f * x[i] + out[i];
}
)", "run"},
};

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

ProgramOptions options_for(const std::string& arch, bool trace, const std::string& trace_path) {
    ProgramOptions options;
    options.name = "trace_codegen";
    options.arch = arch;
    if (trace) {
        options.fdevice_time_trace = trace_path;
        options.pch = false;  // the former cache miss: traced, without PCH
    }
    return options;
}

// Median milliseconds of one launch of `code`'s kernel over n elements.
double time_kernel(const ObjectCode& code, const char* name, Device& device, unsigned n) {
    Stream stream = device.create_stream();
    Buffer out = device.allocate(n * 4ull, stream);
    Buffer in = device.allocate(n * 4ull, stream);
    in.fill_uint32(0x3f9d70a4u, stream);  // 1.23f, and as unsigned a mixed bit pattern
    out.fill_uint32(0x3f800000u, stream);
    Kernel kernel = code.get_kernel(name);
    const LaunchConfig config{.grid = (n + 255) / 256, .block = 256};
    for (int i = 0; i < 20; ++i) launch(stream, config, kernel, out, in, n);
    std::vector<double> samples;
    for (int i = 0; i < 200; ++i) {
        ScopedTimer timer(stream);
        launch(stream, config, kernel, out, in, n);
        samples.push_back(timer.elapsed().count());
    }
    return bench::median(samples);
}

}  // namespace

int main() {
    const bool gpu = system::driver_available() && system::device_count() > 0;
    std::optional<Device> device;
    if (gpu) device.emplace(0);
    const std::string arch = gpu ? device->arch() : "sm_90";
    const std::filesystem::path scratch =
        std::filesystem::temp_directory_path() / ("trace_codegen_bench_" + std::to_string(::getpid()));
    std::filesystem::create_directories(scratch);
    std::printf("arch %s%s\n", arch.c_str(), gpu ? "" : " (no GPU: no kernel timings)");
    std::printf("%-20s %10s %10s %12s %12s %8s %10s %10s %10s\n", "kernel", "ptx same",
                "cubin same", "plain ms", "traced ms", "ratio", "plain s", "miss s", "traced s");
    for (const Case& c : kCases) {
        // A trace file of its own per compile: ptxas reads an existing one (and fails on it).
        Program plain(c.source, SourceType::cxx, options_for(arch, false, {}));
        Program traced_ptx(c.source, SourceType::cxx,
                           options_for(arch, true, (scratch / (std::string(c.kernel) + c.name + "-ptx")).string()));
        Program traced(c.source, SourceType::cxx,
                       options_for(arch, true, (scratch / (std::string(c.kernel) + c.name + "-cubin")).string()));
        const bool ptx_same = plain.compile(CodeType::ptx).code() == traced_ptx.compile(CodeType::ptx).code();
        auto start = std::chrono::steady_clock::now();
        const ObjectCode plain_cubin = plain.compile(CodeType::cubin);
        const double plain_s = seconds_since(start);
        start = std::chrono::steady_clock::now();
        const ObjectCode traced_cubin = traced.compile(CodeType::cubin);
        const double traced_s = seconds_since(start);
        MemoryProgramCache cache;
        Program missed(c.source, SourceType::cxx, options_for(arch, false, {}));
        start = std::chrono::steady_clock::now();
        const ObjectCode cached = compile_cached(missed, CodeType::cubin, {}, {.cache = &cache});
        const double miss_s = seconds_since(start);
        if (cached.code() != plain_cubin.code()) std::printf("error: %s: the cached cubin differs\n", c.name);
        const bool cubin_same = plain_cubin.code() == traced_cubin.code();
        double plain_ms = 0, traced_ms = 0;
        if (gpu) {
            const unsigned n = 1u << 22;
            plain_ms = time_kernel(plain_cubin, c.kernel, *device, n);
            traced_ms = time_kernel(traced_cubin, c.kernel, *device, n);
        }
        std::printf("%-20s %10s %10s %12.4f %12.4f %8.3f %10.3f %10.3f %10.3f\n", c.name,
                    ptx_same ? "yes" : "no", cubin_same ? "yes" : "no", plain_ms, traced_ms,
                    gpu ? traced_ms / plain_ms : 0.0, plain_s, miss_s, traced_s);
    }
    std::error_code ignored;
    std::filesystem::remove_all(scratch, ignored);
    return 0;
}
