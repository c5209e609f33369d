// What jitify users reach for, on a real GPU: PTX without its unused variables
// (ProgramOptions::remove_unused_globals) loads, runs and keeps the variables it uses, as PTX and
// as a cubin made from it; a program whose headers a callback made (with_generated_headers) runs.
#include "test_support.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/generated_headers.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/program.hpp"
#include "cudacore/stream.hpp"

#include <optional>
#include <string>
#include <vector>

namespace {

using namespace cudacore;

const char* const kSource = R"(
__device__ int unused_table[4096];
__constant__ float unused_constant[256];
__device__ int used_device = 5;
__device__ int pointed_to = 7;
__device__ int* used_pointer = &pointed_to;
extern "C" __global__ void k(int* out) { out[0] = used_device + *used_pointer; }
)";

// What `kernel` (one int* parameter) writes to out[0].
int run_one(const ObjectCode& code) {
    Device device(0);
    Stream stream = device.create_stream();
    Buffer out = device.allocate(sizeof(int), stream);
    launch(stream, LaunchConfig{.grid = 1, .block = 1}, code.get_kernel("k"), out);
    std::vector<int> host(1);
    out.copy_to(host, stream);
    stream.sync();
    return host[0];
}

TEST(JitifyOptionsGpu, PtxWithoutUnusedGlobalsRuns) {
    CUDACORE_REQUIRE_GPU();
    ProgramOptions options;
    options.name = "trimmed.cu";
    options.arch = Device(0).arch();
    options.remove_unused_globals = true;
    const ObjectCode ptx = Program(kSource, SourceType::cxx, options).compile(CodeType::ptx);
    ASSERT_EQ(std::string(ptx.code()).find("unused_table"), std::string::npos);
    EXPECT_EQ(run_one(ptx), 12);  // loaded as PTX: the driver compiles it

    // A cubin made from it runs the same, and its kept variables are there.
    ProgramOptions assemble{.name = "trimmed.ptx", .arch = Device(0).arch()};
    const ObjectCode cubin = Program(std::string(ptx.code()), SourceType::ptx, assemble).compile(CodeType::cubin);
    EXPECT_EQ(run_one(cubin), 12);
    Stream stream = Device(0).create_stream();
    EXPECT_EQ(cubin.read_global<int>("used_device", stream), 5);
}

TEST(JitifyOptionsGpu, GeneratedHeadersRun) {
    CUDACORE_REQUIRE_GPU();
    ProgramOptions options;
    options.name = "generated.cu";
    options.arch = Device(0).arch();
    Program program = with_generated_headers(
        Program("#include \"tile.h\"\nextern \"C\" __global__ void k(int* out) { out[0] = TILE * 3; }\n",
                SourceType::cxx, options),
        [](const std::string& name) -> std::optional<std::string> {
            if (name == "tile.h") return "#define TILE 32\n";
            return std::nullopt;
        });
    EXPECT_EQ(run_one(program.compile(CodeType::cubin)), 96);
}

}  // namespace
