// NVVM IR programs on a real GPU: IR compiled to a cubin (NVVM, then nvJitLink) and NVVM's
// LTO-IR linked with a C++ program's LTO-IR both launch and compute the right values.
#include "test_support.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/linker.hpp"
#include "cudacore/program.hpp"

#include <vector>

namespace {

using namespace cudacore;

std::vector<float> run_scale(const Device& device, const Kernel& kernel, const std::vector<float>& in,
                             float factor) {
    Stream stream = device.create_stream();
    const int n = static_cast<int>(in.size());
    Buffer input = device.allocate(in.size() * sizeof(float), stream);
    Buffer output = device.allocate(in.size() * sizeof(float), stream);
    input.copy_from(in, stream);
    output.fill_byte(0xFF, stream);  // poisoned: every element must be written
    LaunchConfig config;
    config.block = {128, 1, 1};
    config.grid = {static_cast<unsigned>((n + 127) / 128), 1, 1};
    launch(stream, config, kernel, output, input, factor, n);
    std::vector<float> out(in.size());
    output.copy_to(out, stream);
    stream.sync();
    return out;
}

std::vector<float> ramp(int n) {
    std::vector<float> values(n);
    for (int i = 0; i < n; ++i) values[i] = static_cast<float>(i % 1000) * 0.5f - 7.0f;
    return values;
}

TEST(NvvmGpu, IrCompiledToCubinLaunchesWithTheRightResult) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    ProgramOptions options;
    options.name = "scale_ir";
    options.arch = device.arch();
    ObjectCode code = Program(test::read_test_data("nvvm/scale.ll"), SourceType::nvvm,
                              options).compile(CodeType::cubin);
    const std::vector<float> in = ramp(100003);
    const std::vector<float> out = run_scale(device, code.get_kernel("scale"), in, 3.0f);
    for (size_t i = 0; i < in.size(); ++i) ASSERT_EQ(out[i], in[i] * 3.0f) << "at " << i;
}

TEST(NvvmGpu, NvvmLtoIrLinkedWithCxxLtoIrLaunches) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    ProgramOptions options;
    options.name = "twice_ir";
    options.arch = device.arch();
    // The device function comes from NVVM IR, the kernel that calls it from C++.
    const std::string twice_ir = R"(target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
define float @twice_plus_one(float %x) {
  %d = fmul float %x, 2.0
  %r = fadd float %d, 1.0
  ret float %r
}
!nvvmir.version = !{!0}
!0 = !{i32 2, i32 0}
)";
    ObjectCode ir_part = Program(twice_ir, SourceType::nvvm, options).compile(CodeType::ltoir);
    ProgramOptions cxx_options;
    cxx_options.name = "scale_cxx";
    cxx_options.arch = device.arch();
    cxx_options.relocatable_device_code = true;
    ObjectCode cxx_part = Program(R"(
extern "C" __device__ float twice_plus_one(float);
extern "C" __global__ void scale(float* out, const float* in, float factor, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = twice_plus_one(in[i]) * factor;
})", SourceType::cxx, cxx_options).compile(CodeType::ltoir);
    LinkerOptions link_options;
    link_options.arch = device.arch();
    link_options.link_time_optimization = true;
    ObjectCode linked = Linker({cxx_part, ir_part}, link_options).link(CodeType::cubin);
    const std::vector<float> in = ramp(4099);
    const std::vector<float> out = run_scale(device, linked.get_kernel("scale"), in, 0.5f);
    for (size_t i = 0; i < in.size(); ++i) ASSERT_EQ(out[i], (in[i] * 2.0f + 1.0f) * 0.5f) << "at " << i;
}

}  // namespace
