// Kernel parameter counts read from the code (cubin .nv.info records, PTX .entry signatures), so
// that drivers which cannot count parameters are never asked past the last one.
#include "crafted_code.hpp"
#include "test_support.hpp"

#include "code/kernel_parameter_count.hpp"
#include "cudacore/program.hpp"

#include <string>

namespace {

using namespace cudacore;
using detail::kernel_parameter_count;

constexpr const char* kKernels = R"(
struct Wide { int a; double b; char c[20]; };
extern "C" __global__ void none() {}
extern "C" __global__ void one(int* a) { *a = 1; }
extern "C" __global__ void three(int a, double b, char* c) { if (a) c[0] = char(b); }
extern "C" __global__ void eight(char a, short b, int c, long d, float e, double f, Wide g,
                                 int* h) { h[0] = a + b + c + d + e + f + g.a; }
extern "C" __global__ void unused(int a, int b) {}
extern "C" __global__ void last_is_a_byte(double* out, char flag) { if (flag) out[0] = 1.0; }
template <class T> __global__ void scale(T* p, T v, int n) { if (n) p[0] = v; }
)";

ObjectCode compile(CodeType target, std::vector<std::string> names = {}) {
    ProgramOptions options;
    options.name = "parameters";
    options.arch = "sm_90";
    return Program(kKernels, SourceType::cxx, options).compile(target, names);
}

TEST(KernelParameterCount, CubinAndPtxSayHowManyParametersEachKernelTakes) {
    for (CodeType type : {CodeType::cubin, CodeType::ptx}) {
        const ObjectCode code = compile(type, {"scale<float>"});
        const std::string scale = code.symbol_map().at("scale<float>");
        const std::pair<std::string, std::size_t> expected[] = {
            {"none", 0}, {"one", 1}, {"three", 3}, {"eight", 8},
            {"unused", 2}, {"last_is_a_byte", 2}, {scale, 3}};
        for (const auto& [name, count] : expected) {
            const auto found = kernel_parameter_count(type, code.code(), name);
            ASSERT_TRUE(found.has_value()) << to_string(type) << " " << name;
            EXPECT_EQ(*found, count) << to_string(type) << " " << name;
        }
        EXPECT_FALSE(kernel_parameter_count(type, code.code(), "missing").has_value());
        EXPECT_FALSE(kernel_parameter_count(type, code.code(), "on").has_value())
            << "a prefix of a kernel name is not that kernel";
    }
}

TEST(KernelParameterCount, FatbinImagesSayLikeTheCodeTheyHold) {
    const ObjectCode cubin = compile(CodeType::cubin, {"scale<float>"});
    const ObjectCode ptx = compile(CodeType::ptx, {"scale<float>"});
    const std::string scale = cubin.symbol_map().at("scale<float>");
    const std::string elf_fatbin = test::fatbin_around(cubin.code(), 90);
    const std::string ptx_fatbin = test::fatbin_around(ptx.code(), 90, 1);
    for (const auto& [name, count] : std::vector<std::pair<std::string, std::size_t>>{
             {"none", 0}, {"three", 3}, {"eight", 8}, {scale, 3}}) {
        EXPECT_EQ(kernel_parameter_count(CodeType::fatbin, elf_fatbin, name), count) << name;
        EXPECT_EQ(kernel_parameter_count(CodeType::fatbin, ptx_fatbin, name), count) << name;
    }
    EXPECT_FALSE(kernel_parameter_count(CodeType::fatbin, elf_fatbin, "missing").has_value());
    // A malformed fatbin, or one whose only image is compressed, says nothing.
    EXPECT_FALSE(kernel_parameter_count(CodeType::fatbin, test::wrapping_fatbin(), "three"));
    std::string compressed = elf_fatbin;
    test::put_at<std::uint64_t>(compressed, 16 + 40, 0x11 | 0x2000);  // the compressed flag
    EXPECT_FALSE(kernel_parameter_count(CodeType::fatbin, compressed, "three").has_value());
}

TEST(KernelParameterCount, OtherOrDamagedCodeSaysNothing) {
    const ObjectCode cubin = compile(CodeType::cubin);
    EXPECT_FALSE(kernel_parameter_count(CodeType::ltoir, cubin.code(), "three").has_value());
    // Truncated anywhere: never a wrong count, at worst none.
    const std::string bytes(cubin.code());
    for (std::size_t size = 0; size < bytes.size(); size += 97) {
        const auto found =
            kernel_parameter_count(CodeType::cubin, std::string_view(bytes).substr(0, size), "three");
        if (found) EXPECT_EQ(*found, 3u) << "truncated to " << size;
    }
    EXPECT_FALSE(kernel_parameter_count(CodeType::ptx, ".entry three(.param .u32 a", "three"))
        << "an unterminated parameter list";
}

}  // namespace
