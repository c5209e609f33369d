// What jitify users rely on, on a real GPU: kernels that include the C++ standard headers
// (through cudacore's standard headers) compute the right values, and a kernel of linked code is
// launched through the name expression its input was compiled with.
#include "test_support.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/linker.hpp"
#include "cudacore/program.hpp"

#include <cstdint>
#include <limits>
#include <vector>

namespace {

using namespace cudacore;

std::vector<double> run_one_block(const Device& device, const Kernel& kernel, std::size_t n) {
    Stream stream = device.create_stream();
    Buffer out = device.allocate(n * sizeof(double), stream);
    out.fill_byte(0xFF, stream);  // poisoned: every element must be written
    launch(stream, LaunchConfig{.grid = 1, .block = 1}, kernel, out);
    std::vector<double> host(n);
    out.copy_to(host, stream);
    stream.sync();
    return host;
}

TEST(JitCompatGpu, StandardHeadersComputeTheRightValues) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    ProgramOptions options;
    options.name = "std_headers";
    options.std_headers = true;
    options.arch = device.arch();
    Program program(R"(
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <tuple>
#include <type_traits>
#include <utility>
template <class T>
__global__ void values(double* out) {
    static_assert(std::is_same_v<std::remove_const_t<const T>, T>);
    out[0] = std::numeric_limits<T>::max();
    out[1] = std::sqrt(T(16)) + std::fma(T(2), T(3), T(1));
    auto t = std::make_tuple(std::uint8_t(250), T(0.5));
    out[2] = std::get<0>(t) + std::get<1>(t);
    auto p = std::make_pair(3, 4);
    std::swap(p.first, p.second);
    out[3] = p.first * 10 + p.second;
    out[4] = std::is_integral<T>::value ? 1 : 2;
    out[5] = sizeof(std::int64_t);
    if (threadIdx.x == 0) printf("std headers ran\n");
}
)", SourceType::cxx, options);
    ObjectCode code = program.compile(CodeType::cubin, {"values<float>"});
    const std::vector<double> got = run_one_block(device, code.get_kernel("values<float>"), 6);
    EXPECT_EQ(got[0], static_cast<double>(std::numeric_limits<float>::max()));
    EXPECT_EQ(got[1], 4.0 + 7.0);
    EXPECT_EQ(got[2], 250.5);
    EXPECT_EQ(got[3], 43.0);
    EXPECT_EQ(got[4], 2.0);
    EXPECT_EQ(got[5], 8.0);
}

TEST(JitCompatGpu, LinkedCodeLaunchesThroughItsInputsNameExpressions) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    ProgramOptions options;
    options.arch = device.arch();
    options.relocatable_device_code = true;
    options.name = "unit_a";
    const ObjectCode a = Program(R"(
extern __device__ double offset_of(double x);
template <class T, int N>
__global__ void fill(double* out) { out[0] = offset_of(T(N)); }
)", SourceType::cxx, options).compile(CodeType::ltoir, {"fill<float, 3>", "fill<int, 5>"});
    options.name = "unit_b";
    const ObjectCode b = Program("__device__ double offset_of(double x) { return x + 0.25; }\n",
                                 SourceType::cxx, options)
                             .compile(CodeType::ltoir);
    LinkerOptions link;
    link.name = "named";
    link.arch = device.arch();
    link.link_time_optimization = true;
    ObjectCode linked = Linker({a, b}, link).link(CodeType::cubin);
    EXPECT_EQ(run_one_block(device, linked.get_kernel("fill<float, 3>"), 1)[0], 3.25);
    EXPECT_EQ(run_one_block(device, linked.get_kernel("fill<int, 5>"), 1)[0], 5.25);
}

}  // namespace
