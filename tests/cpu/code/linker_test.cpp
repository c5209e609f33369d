// Linker: nvJitLink over LTO-IR, PTX and cubin inputs; options become flags; link errors carry
// the log. No GPU needed: every test gives an explicit arch.
#include "test_support.hpp"

#include "cudacore/code_inspection.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/linker.hpp"
#include "cudacore/program.hpp"

#include <algorithm>

namespace {

using namespace cudacore;

// Unit A's kernel calls a device function defined in unit B: only a real link resolves it.
constexpr const char* kUnitA = R"(
extern __device__ float scale_of(float x);
extern "C" __global__ void kernel_a(float* data) { data[threadIdx.x] = scale_of(data[threadIdx.x]); }
)";
constexpr const char* kUnitB = R"(
__device__ float scale_of(float x) { return 3.0f * x; }
extern "C" __global__ void kernel_b(float* data) { data[threadIdx.x] += 1.0f; }
)";

ObjectCode compile_unit(const char* source, const std::string& name, CodeType target,
                        const std::string& arch = "sm_90") {
    ProgramOptions options;
    options.name = name;
    options.arch = arch;
    options.relocatable_device_code = true;
    return Program(source, SourceType::cxx, options).compile(target);
}

LinkerOptions linker_options(bool lto, const std::string& name = "test_link") {
    LinkerOptions options;
    options.name = name;
    options.arch = "sm_90";
    if (lto) options.link_time_optimization = true;
    return options;
}

TEST(Linker, TwoLtoIrUnitsLinkIntoOneCubinWithBothKernels) {
    ObjectCode a = compile_unit(kUnitA, "unit_a", CodeType::ltoir);
    ObjectCode b = compile_unit(kUnitB, "unit_b", CodeType::ltoir);
    Linker linker({a, b}, linker_options(true));
    EXPECT_EQ(linker.backend(), "nvJitLink");
    ObjectCode cubin = linker.link(CodeType::cubin);
    EXPECT_EQ(cubin.code_type(), CodeType::cubin);
    EXPECT_EQ(cubin.name(), "test_link");
    CodeInfo info = inspect_code(cubin.code());
    EXPECT_EQ(info.type, CodeType::cubin);
    EXPECT_EQ(info.arch, "sm_90");
    EXPECT_EQ(info.kernels, (std::vector<std::string>{"kernel_a", "kernel_b"}));
    EXPECT_TRUE(linker.error_log().empty()) << linker.error_log();
}

// The floating-point options reach NVVM in a link-time optimised link, which takes them as 1 or
// 0 only ("-fma=false" ended such links with NVVM_ERROR_INVALID_OPTION).
TEST(Linker, FloatingPointOptionsWorkWithLinkTimeOptimization) {
    ObjectCode a = compile_unit(kUnitA, "unit_a", CodeType::ltoir);
    ObjectCode b = compile_unit(kUnitB, "unit_b", CodeType::ltoir);
    for (bool value : {false, true}) {
        LinkerOptions options = linker_options(true);
        options.ftz = value;
        options.prec_div = value;
        options.prec_sqrt = value;
        options.fma = value;
        ObjectCode cubin = Linker({a, b}, options).link(CodeType::cubin);
        EXPECT_EQ(inspect_code(cubin.code()).kernels,
                  (std::vector<std::string>{"kernel_a", "kernel_b"}));
    }
}

TEST(Linker, LtoIrToPtx) {
    ObjectCode a = compile_unit(kUnitA, "unit_a", CodeType::ltoir);
    ObjectCode b = compile_unit(kUnitB, "unit_b", CodeType::ltoir);
    Linker linker({a, b}, linker_options(true));
    ObjectCode ptx = linker.link(CodeType::ptx);
    EXPECT_EQ(ptx.code_type(), CodeType::ptx);
    EXPECT_EQ(ptx_kernel_names(ptx.code()), (std::vector<std::string>{"kernel_a", "kernel_b"}));
}

TEST(Linker, RelocatablePtxAndCubinInputs) {
    ObjectCode a = compile_unit(kUnitA, "unit_a", CodeType::ptx);
    ObjectCode b = compile_unit(kUnitB, "unit_b", CodeType::cubin);
    Linker linker({a, b}, linker_options(false));
    ObjectCode cubin = linker.link();
    EXPECT_EQ(inspect_code(cubin.code()).kernels,
              (std::vector<std::string>{"kernel_a", "kernel_b"}));
}

TEST(Linker, UnresolvedSymbolIsALinkErrorWithTheLog) {
    ObjectCode a = compile_unit(kUnitA, "unit_a", CodeType::cubin);
    Linker linker({a}, linker_options(false, "lonely"));
    try {
        linker.link();
        FAIL() << "expected LinkError";
    } catch (const LinkError& e) {
        EXPECT_EQ(e.name(), "lonely");
        EXPECT_NE(e.log().find("scale_of"), std::string::npos) << e.log();
        EXPECT_NE(std::string(e.what()).find("lonely"), std::string::npos) << e.what();
        EXPECT_EQ(e.options(), linker.flags());
        EXPECT_FALSE(linker.error_log().empty());
    }
}

TEST(Linker, GarbageInputIsALinkError) {
    Linker linker({ObjectCode::from_ptx("garbage that is not ptx", "junk.ptx")}, linker_options(false));
    try {
        linker.link();
        FAIL() << "expected LinkError";
    } catch (const LinkError& e) {
        EXPECT_NE(e.log().find("nvJitLinkAddData(ptx 'junk.ptx'"), std::string::npos) << e.log();
    }
}

TEST(Linker, OptionsBecomeFlagsInOrder) {
    LinkerOptions options = linker_options(true);
    options.arch = "90";
    options.max_register_count = 64;
    options.optimization_level = 3;
    options.lineinfo = true;
    options.ftz = true;
    options.kernels_used = {"kernel_a"};
    options.ptxas_options = {"-v"};
    options.extra_flags = {"-raw"};
    Linker linker({ObjectCode::from_ptx(".version 8.0", "x")}, options);
    EXPECT_EQ(linker.flags(),
              (std::vector<std::string>{"-arch=sm_90", "-maxrregcount=64", "-lto", "-O3",
                                        "-lineinfo", "-ftz=1", "-kernels-used=kernel_a",
                                        "-Xptxas=-v", "-no-cache", "-raw"}));
    EXPECT_EQ(nvjitlink_flags(options, true).at(3), "-ptx");
}

TEST(Linker, BadInputsAreRefused) {
    EXPECT_THROW(Linker({}, linker_options(false)), InvalidArgumentError);
    Linker linker({compile_unit(kUnitB, "unit_b", CodeType::cubin)}, linker_options(false));
    EXPECT_THROW(linker.link(CodeType::ltoir), InvalidArgumentError);
    LinkerOptions bad_arch = linker_options(false);
    bad_arch.arch = "sm_12";
    EXPECT_THROW(Linker({compile_unit(kUnitB, "unit_b", CodeType::cubin)}, bad_arch).link(),
                 Error);
    bad_arch.arch = "not-an-arch";
    EXPECT_THROW(Linker({compile_unit(kUnitB, "unit_b", CodeType::cubin)}, bad_arch).flags(),
                 InvalidArgumentError);
}

// A verbose link returns the info log on failure too: in LinkError's log and in info_log().
TEST(Linker, VerboseLinkThatFailsStillReturnsTheInfoLog) {
    ObjectCode a = compile_unit(kUnitA, "unit_a", CodeType::ptx);  // scale_of is never defined
    LinkerOptions verbose = linker_options(false);
    verbose.verbose = true;
    LinkerOptions ptxas_v = linker_options(false);
    ptxas_v.ptxas_options = {"-v"};
    for (const LinkerOptions& options : {verbose, ptxas_v}) {
        Linker linker({a}, options);
        try {
            linker.link();
            ADD_FAILURE() << "an undefined device function linked";
        } catch (const LinkError& e) {
            // Whatever the linker logged is returned; some nvJitLink 13.0 builds log nothing
            // for a failed link (NVJITLINK_ERROR_INTERNAL before ptxas -v writes anything, or
            // an empty -verbose log), and the error then says so.
            EXPECT_NE(e.log().find("info log:"), std::string::npos) << e.log();
            if (linker.info_log().empty()) {
                EXPECT_NE(e.log().find("the linker wrote no info log"), std::string::npos)
                    << e.log();
            } else {
                EXPECT_NE(e.log().find(linker.info_log()), std::string::npos) << e.log();
            }
            EXPECT_NE(e.log().find("scale_of"), std::string::npos) << e.log();  // the error too
        }
    }
    // Not verbose: the error alone.
    Linker quiet({a}, linker_options(false));
    try {
        quiet.link();
        ADD_FAILURE() << "an undefined device function linked";
    } catch (const LinkError& e) {
        EXPECT_EQ(e.log().find("info log:"), std::string::npos) << e.log();
    }
}

// ptxas -v (LinkerOptions::ptxas_options, as cuda.core's users pass it) reports each kernel's
// registers and memory in info_log(), in-process and from the link worker alike.
TEST(Linker, PtxasVerboseReportIsInTheInfoLog) {
    const ObjectCode ptx = compile_unit(kUnitB, "unit_b", CodeType::ptx);
    for (const bool isolated : {false, true}) {
        LinkerOptions options = linker_options(false, isolated ? "ptxas_v_isolated" : "ptxas_v");
        options.ptxas_options = {"-v"};
        options.isolated = isolated;
        Linker linker({ptx}, options);
        const ObjectCode cubin = linker.link();
        EXPECT_EQ(inspect_code(cubin.code()).kernels, std::vector<std::string>{"kernel_b"});
        const std::string& log = linker.info_log();
        EXPECT_NE(log.find("kernel_b"), std::string::npos) << "isolated " << isolated << ":\n" << log;
        EXPECT_NE(log.find("registers"), std::string::npos) << "isolated " << isolated << ":\n" << log;
        EXPECT_NE(log.find("stack frame"), std::string::npos) << "isolated " << isolated << ":\n" << log;
    }
    // Without -v, no report.
    Linker quiet({ptx}, linker_options(false, "quiet"));
    quiet.link();
    EXPECT_EQ(quiet.info_log().find("registers"), std::string::npos) << quiet.info_log();
}

// The report exists only when ptxas runs: nvJitLink's cache (the driver's compute cache) and
// NVRTC's would serve the code of an earlier run with an empty report, so asking for it turns
// their cache off unless no_cache was set.
TEST(Linker, PtxasReportIsNeverServedFromACache) {
    auto has = [](const std::vector<std::string>& flags, const char* flag) {
        return std::find(flags.begin(), flags.end(), flag) != flags.end();
    };
    auto linker_flags = [](const LinkerOptions& options) {
        return Linker({ObjectCode::from_ptx(".version 8.0", "x")}, options).flags();
    };
    LinkerOptions options = linker_options(false);
    EXPECT_FALSE(has(linker_flags(options), "-no-cache"));
    for (const char* report : {"-v", "--verbose"}) {
        options.ptxas_options = {"-O3", report};
        EXPECT_TRUE(has(linker_flags(options), "-no-cache")) << report;
    }
    options.no_cache = false;  // the caller's choice stands
    EXPECT_FALSE(has(linker_flags(options), "-no-cache"));

    ProgramOptions program_options;
    program_options.arch = "sm_90";
    EXPECT_FALSE(has(Program(kUnitB, SourceType::cxx, program_options).flags(CodeType::cubin),
                     "--no-cache"));
    program_options.ptxas_options = {"-v"};
    EXPECT_TRUE(has(Program(kUnitB, SourceType::cxx, program_options).flags(CodeType::cubin),
                    "--no-cache"));
    // And a compile to cubin asking for it gets the report in its log.
    Program program(kUnitB, SourceType::cxx, program_options);
    program.compile(CodeType::cubin);
    EXPECT_NE(program.log().find("registers"), std::string::npos) << program.log();
}

TEST(Linker, InfoLogWithVerbose) {
    LinkerOptions options = linker_options(false);
    options.verbose = true;
    Linker linker({compile_unit(kUnitB, "unit_b", CodeType::ptx)}, options);
    linker.link();
    EXPECT_FALSE(linker.info_log().empty());
}

}  // namespace
