// A program for the cuda-gdb test: compiles a kernel at run time with device debug information
// (its source written for debuggers, see ProgramOptions::debug_source_dir), launches it once and
// checks its result. Prints the path of the source file, then "ok" (exit 0); without a GPU
// "skipped: <why>" (exit 0). argv[1], when given, is the folder for the source.
#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/program.hpp"
#include "cudacore/system.hpp"

#include <cstdio>
#include <exception>
#include <vector>

namespace {

// Each line says what it is, so a listing of any of them is recognisable.
const char* const kSource = R"(extern "C" __global__ void jit_debug_kernel(int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;  // jit_debug_kernel: index line
    if (i < n) out[i] = 3 * i + 1;                   // jit_debug_kernel: store line
}
)";

}  // namespace

int main(int argc, char** argv) try {
    using namespace cudacore;
    if (!system::driver_available() || system::device_count() == 0) {
        std::printf("skipped: no CUDA device\n");
        return 0;
    }
    const Device device(0);
    ProgramOptions options;
    options.name = "jit_debug_kernel.cu";
    options.arch = device.arch();
    options.debug = true;
    if (argc > 1) options.debug_source_dir = argv[1];
    Program program(kSource, SourceType::cxx, options);
    const ObjectCode code = program.compile(CodeType::cubin);
    std::printf("source: %s\n", program.debug_source_path().c_str());
    std::fflush(stdout);

    Stream stream = device.create_stream();
    constexpr int n = 256;
    Buffer out = device.allocate(n * sizeof(int), stream);
    launch(stream, LaunchConfig{.grid = Dim3(1), .block = Dim3(n)}, code.get_kernel("jit_debug_kernel"),
           out, n);
    std::vector<int> host(n);
    out.copy_to(host, stream);
    stream.sync();
    for (int i = 0; i < n; ++i) {
        if (host[i] != 3 * i + 1) {
            std::printf("wrong value at %d: %d\n", i, host[i]);
            return 1;
        }
    }
    std::printf("ok\n");
    return 0;
} catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    return 2;
}
