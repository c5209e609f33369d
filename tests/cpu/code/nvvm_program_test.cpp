// NVVM IR programs through libNVVM (the toolkit's, or the nvidia-nvvm package's): text and
// bitcode, each option, extra modules, libdevice, invalid IR, refused options, cache keys.
#include "cudacore/cache_key.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/linker.hpp"
#include "cudacore/program.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

using namespace cudacore;

namespace {

std::string scale_ir() { return test::read_test_data("nvvm/scale.ll"); }

const char* const kPrelude = R"(target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
)";
const char* const kVersion = R"(
!nvvmir.version = !{!99}
!99 = !{i32 2, i32 0}
)";

// A kernel calling a function it only declares: defined by another module, or libdevice.
std::string calling_kernel(const std::string& callee) {
    return std::string(kPrelude) + "declare float @" + callee + "(float)\n" +
           "define void @apply(float* %out, float %x) {\n"
           "  %r = call float @" + callee + "(float %x)\n"
           "  store float %r, float* %out\n  ret void\n}\n"
           "!nvvm.annotations = !{!0}\n"
           "!0 = !{void (float*, float)* @apply, !\"kernel\", i32 1}\n" + kVersion;
}

std::string twice_module() {
    return std::string(kPrelude) +
           "define float @twice(float %x) {\n  %r = fmul float %x, 2.0\n  ret float %r\n}\n" +
           kVersion;
}

ProgramOptions sm90(std::string name = "scale_ir") {
    ProgramOptions options;
    options.name = std::move(name);
    options.arch = "sm_90";
    return options;
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

TEST(NvvmProgram, TextIrCompilesToPtx) {
    Program program(scale_ir(), SourceType::nvvm, sm90());
    EXPECT_EQ(program.backend(), "NVVM");
    ObjectCode code = program.compile(CodeType::ptx);
    EXPECT_EQ(code.code_type(), CodeType::ptx);
    const std::string ptx(code.code());
    EXPECT_TRUE(contains(ptx, ".target sm_90")) << ptx.substr(0, 400);
    EXPECT_TRUE(contains(ptx, ".entry scale")) << ptx.substr(0, 400);
    EXPECT_NE(ptx.back(), '\0');
}

TEST(NvvmProgram, BitcodeCompilesToPtx) {
#ifndef CUDACORE_TEST_NVVM_BITCODE
    GTEST_SKIP() << "llvm-as was not found when the tests were built, so no bitcode was made";
#else
    // Made at build time beside the test program (found there also when the build has moved).
    const std::string bitcode =
        test::read_file(test::executable_dir() / CUDACORE_TEST_NVVM_BITCODE);
    ASSERT_EQ(bitcode.substr(0, 4), std::string("BC\xC0\xDE", 4)) << "not LLVM bitcode";
    ObjectCode code = Program(bitcode, SourceType::nvvm, sm90()).compile(CodeType::ptx);
    EXPECT_TRUE(contains(std::string(code.code()), ".entry scale"));
#endif
}

TEST(NvvmProgram, OptionsInNvvmSpelling) {
    ProgramOptions options = sm90();
    options.arch = "sm_90a";
    options.device_code_optimize = false;
    options.debug = true;
    options.ftz = true;
    options.prec_sqrt = false;
    options.prec_div = false;
    options.fma = false;
    options.extra_flags = {"-jump-table-density=50"};
    Program program(scale_ir(), SourceType::nvvm, options);
    const std::vector<std::string> expected{"-arch=compute_90a", "-opt=0",        "-g",
                                            "-ftz=1",            "-prec-sqrt=0",   "-prec-div=0",
                                            "-fma=0",            "-jump-table-density=50"};
    EXPECT_EQ(program.flags(CodeType::ptx), expected);
    std::vector<std::string> lto = expected;
    lto.insert(lto.end() - 1, "-gen-lto");
    EXPECT_EQ(program.flags(CodeType::ltoir), lto);
    // Every one of them is accepted by libNVVM itself.
    ObjectCode code = program.compile(CodeType::ptx);
    EXPECT_TRUE(contains(std::string(code.code()), ".target sm_90a"));
    EXPECT_EQ(Program(scale_ir(), SourceType::nvvm, sm90()).flags(CodeType::ptx),
              std::vector<std::string>{"-arch=compute_90"});
}

TEST(NvvmProgram, OptionsNvvmDoesNotHaveAreRefusedByName) {
    ProgramOptions options = sm90();
    options.define_macro = {{"WIDTH", "4"}};
    options.std = "c++17";
    options.max_register_count = 32;
    Program program(scale_ir(), SourceType::nvvm, options);
    try {
        program.compile(CodeType::ptx);
        FAIL() << "expected InvalidArgumentError";
    } catch (const InvalidArgumentError& e) {
        const std::string message = e.what();
        EXPECT_TRUE(contains(message, "libNVVM has no option")) << message;
        EXPECT_TRUE(contains(message, "define_macro")) << message;
        EXPECT_TRUE(contains(message, "std")) << message;
        EXPECT_TRUE(contains(message, "max_register_count")) << message;
        EXPECT_TRUE(contains(message, "scale_ir")) << message;
    }
}

TEST(NvvmProgram, ExtraSourcesAreLinkedByNvvm) {
    ProgramOptions options = sm90("apply_twice");
    options.extra_sources = {{"twice", twice_module()}};
    ObjectCode code =
        Program(calling_kernel("twice"), SourceType::nvvm, options).compile(CodeType::ptx);
    const std::string ptx(code.code());
    EXPECT_TRUE(contains(ptx, ".entry apply")) << ptx;
    EXPECT_FALSE(contains(ptx, ".extern .func")) << "twice should be defined, not external:\n" << ptx;

    ProgramOptions empty = sm90("apply_twice");
    empty.extra_sources = {{"nothing", ""}};
    EXPECT_THROW(Program(calling_kernel("twice"), SourceType::nvvm, empty).compile(CodeType::ptx),
                 InvalidArgumentError);
}

TEST(NvvmProgram, ExtraSourcesAndLibdeviceAreRefusedForCxxAndPtx) {
    ProgramOptions options = sm90("not_nvvm");
    options.extra_sources = {{"twice", twice_module()}};
    for (SourceType type : {SourceType::cxx, SourceType::ptx}) {
        Program program(type == SourceType::cxx ? "__global__ void k() {}" : ".version 8.0",
                        type, options);
        try {
            program.compile(CodeType::cubin);
            FAIL() << "expected InvalidArgumentError";
        } catch (const InvalidArgumentError& e) {
            EXPECT_TRUE(contains(e.what(), "extra_sources")) << e.what();
            EXPECT_TRUE(contains(e.what(), "NVVM IR programs")) << e.what();
        }
    }
    ProgramOptions libdevice = sm90("not_nvvm");
    libdevice.use_libdevice = true;
    EXPECT_THROW(Program("__global__ void k() {}", SourceType::cxx, libdevice).flags(CodeType::ptx),
                 InvalidArgumentError);
}

TEST(NvvmProgram, LibdeviceIsLinkedWhenAsked) {
    const std::string source = calling_kernel("__nv_sinf");
    const std::string without(Program(source, SourceType::nvvm, sm90("sine")).compile(CodeType::ptx).code());
    EXPECT_TRUE(contains(without, ".extern .func")) << "without libdevice __nv_sinf stays external";
    ProgramOptions options = sm90("sine");
    options.use_libdevice = true;
    const std::string with(Program(source, SourceType::nvvm, options).compile(CodeType::ptx).code());
    EXPECT_TRUE(contains(with, ".entry apply"));
    EXPECT_FALSE(contains(with, ".extern .func")) << with;
}

TEST(NvvmProgram, InvalidIrIsACompileErrorWithNvvmsLog) {
    const std::string broken = std::string(kPrelude) + "define void @k( {\n  ret void\n}\n";
    Program program(broken, SourceType::nvvm, sm90("broken_ir"));
    try {
        program.compile(CodeType::ptx);
        FAIL() << "expected CompileError";
    } catch (const CompileError& e) {
        EXPECT_EQ(e.program_name(), "broken_ir");
        EXPECT_FALSE(e.log().empty());
        EXPECT_TRUE(contains(e.log(), "NVVM_ERROR")) << e.log();
        EXPECT_TRUE(contains(e.log(), "broken_ir")) << "NVVM's log names the module: " << e.log();
    }
}

TEST(NvvmProgram, LtoIrLinksWithNvJitLinkAndCubinIsLinkedForYou) {
    ObjectCode ltoir = Program(scale_ir(), SourceType::nvvm, sm90()).compile(CodeType::ltoir);
    EXPECT_EQ(ltoir.code_type(), CodeType::ltoir);
    EXPECT_GT(ltoir.code().size(), 16u);
    LinkerOptions link_options;
    link_options.arch = "sm_90";
    link_options.link_time_optimization = true;
    ObjectCode linked = Linker({ltoir}, link_options).link(CodeType::cubin);
    EXPECT_EQ(linked.code_type(), CodeType::cubin);

    ObjectCode cubin = Program(scale_ir(), SourceType::nvvm, sm90()).compile(CodeType::cubin);
    EXPECT_EQ(cubin.code_type(), CodeType::cubin);
    EXPECT_EQ(std::string(cubin.code().substr(0, 4)), "\x7f" "ELF");

    ProgramOptions virtual_arch = sm90();
    virtual_arch.arch = "compute_90";
    EXPECT_THROW(Program(scale_ir(), SourceType::nvvm, virtual_arch).compile(CodeType::cubin),
                 InvalidArgumentError);
}

TEST(NvvmProgram, LtoIrLinksWithACxxProgramsLtoIr) {
    // The kernel from C++, the device function it calls from NVVM IR, joined by nvJitLink.
    const std::string twice = std::string(kPrelude) +
                              "define float @twice(float %x) {\n  %r = fmul float %x, 2.0\n"
                              "  ret float %r\n}\n" + kVersion;
    ObjectCode ir_part = Program(twice, SourceType::nvvm, sm90("twice")).compile(CodeType::ltoir);
    ProgramOptions cxx = sm90("caller");
    cxx.relocatable_device_code = true;
    ObjectCode cxx_part = Program(R"(extern "C" __device__ float twice(float);
extern "C" __global__ void apply(float* out, float x) { *out = twice(x); })",
                                  SourceType::cxx, cxx).compile(CodeType::ltoir);
    LinkerOptions link_options;
    link_options.arch = "sm_90";
    link_options.link_time_optimization = true;
    ObjectCode linked = Linker({cxx_part, ir_part}, link_options).link(CodeType::cubin);
    EXPECT_EQ(linked.code_type(), CodeType::cubin);
}

TEST(NvvmProgram, NameExpressionsAreRefused) {
    Program program(scale_ir(), SourceType::nvvm, sm90());
    EXPECT_THROW(program.compile(CodeType::ptx, {"scale<float>"}), InvalidArgumentError);
}

TEST(NvvmProgram, CacheKeyCoversSourceTypeExtraSourcesAndLibdevice) {
    const std::string source = calling_kernel("twice");
    ProgramOptions a = sm90("k");
    a.extra_sources = {{"twice", twice_module()}};
    ProgramOptions b = a;
    b.extra_sources[0].code += "\n; changed\n";
    ProgramOptions c = a;
    c.use_libdevice = true;
    const CacheKey key_a = cache_key(Program(source, SourceType::nvvm, a), CodeType::ptx);
    EXPECT_EQ(key_a, cache_key(Program(source, SourceType::nvvm, a), CodeType::ptx));
    EXPECT_NE(key_a, cache_key(Program(source, SourceType::nvvm, b), CodeType::ptx));
    EXPECT_NE(key_a, cache_key(Program(source, SourceType::nvvm, c), CodeType::ptx));
    EXPECT_NE(key_a, cache_key(Program(source, SourceType::nvvm, a), CodeType::ltoir));
}
