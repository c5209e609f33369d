// Program: C++ to PTX, cubin and LTO-IR through NVRTC, PTX to cubin, name expressions, errors
// and concurrency. No GPU needed: every test gives an explicit arch.
#include "test_support.hpp"

#include "cudacore/code_inspection.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/linker_options.hpp"
#include "cudacore/program.hpp"

#include <elf.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

namespace {

using namespace cudacore;

constexpr const char* kTwoKernels = R"(
extern "C" __global__ void add_one(float* data, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] += 1.0f;
}
extern "C" __global__ void twice(float* data, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] *= 2.0f;
}
)";

constexpr const char* kTemplateKernel = R"(
template <typename T>
__global__ void scale(T* data, T factor, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] *= factor;
}
)";

ProgramOptions options_for(const std::string& arch, const std::string& name = "test_program") {
    ProgramOptions options;
    options.name = name;
    options.arch = arch;
    return options;
}

Elf64_Ehdr elf_header(std::string_view code) {
    Elf64_Ehdr header{};
    EXPECT_GE(code.size(), sizeof(header));
    std::memcpy(&header, code.data(), std::min(code.size(), sizeof(header)));
    return header;
}

TEST(Program, CxxToPtxHasAnEntryPerKernel) {
    Program program(kTwoKernels, SourceType::cxx, options_for("sm_90"));
    ObjectCode ptx = program.compile(CodeType::ptx);
    EXPECT_EQ(ptx.code_type(), CodeType::ptx);
    EXPECT_EQ(ptx.name(), "test_program");
    const std::string text(ptx.code());
    EXPECT_NE(text.find(".entry add_one("), std::string::npos) << text;
    EXPECT_NE(text.find(".entry twice("), std::string::npos) << text;
    EXPECT_NE(text.find(".target sm_90"), std::string::npos);
    EXPECT_EQ(text.find('\0'), std::string::npos) << "PTX must not carry its NUL terminator";
}

TEST(Program, CxxToCubinIsACudaElfForTheArch) {
    for (const std::string arch : {"sm_80", "sm_90"}) {
        Program program(kTwoKernels, SourceType::cxx, options_for(arch));
        ObjectCode cubin = program.compile(CodeType::cubin);
        EXPECT_EQ(cubin.code_type(), CodeType::cubin);
        ASSERT_GT(cubin.size(), 4u);
        EXPECT_EQ(cubin.code().substr(0, 4), std::string_view("\x7f" "ELF", 4));
        Elf64_Ehdr header = elf_header(cubin.code());
        EXPECT_EQ(header.e_machine, 190) << "EM_CUDA";
        CodeInfo info = inspect_code(cubin.code());
        EXPECT_EQ(info.arch, arch);
        EXPECT_EQ(info.kernels, (std::vector<std::string>{"add_one", "twice"}));
    }
}

TEST(Program, CxxToLtoIr) {
    Program program(kTwoKernels, SourceType::cxx, options_for("sm_90"));
    ObjectCode ltoir = program.compile(CodeType::ltoir);
    EXPECT_EQ(ltoir.code_type(), CodeType::ltoir);
    EXPECT_GT(ltoir.size(), 0u);
    EXPECT_EQ(detect_code_type(ltoir.code()), CodeType::ltoir);
    const auto flags = program.flags(CodeType::ltoir);
    EXPECT_NE(std::find(flags.begin(), flags.end(), "-dlto"), flags.end());
}

TEST(Program, NameExpressionsMapToLoweredNames) {
    Program program(kTemplateKernel, SourceType::cxx, options_for("sm_90"));
    ObjectCode cubin = program.compile(CodeType::cubin, {"scale<float>", "scale<double>"});
    const SymbolMap& symbols = cubin.symbol_map();
    ASSERT_EQ(symbols.size(), 2u);
    const std::string lowered_float = cubin.lowered_name("scale<float>");
    const std::string lowered_double = cubin.lowered_name("scale<double>");
    EXPECT_EQ(lowered_float, "_Z5scaleIfEvPT_S0_i");
    EXPECT_NE(lowered_float, lowered_double);
    // The lowered names are the kernels actually in the cubin.
    CodeInfo info = inspect_code(cubin.code());
    EXPECT_NE(std::find(info.kernels.begin(), info.kernels.end(), lowered_float), info.kernels.end());
    EXPECT_NE(std::find(info.kernels.begin(), info.kernels.end(), lowered_double), info.kernels.end());
}

TEST(Program, SyntaxErrorGivesCompileErrorNamingTheLine) {
    const std::string source = "__global__ void ok() {}\n"
                               "__global__ void broken() { int x = ; }\n";
    Program program(source, SourceType::cxx, options_for("sm_90", "broken_program"));
    try {
        program.compile(CodeType::ptx);
        FAIL() << "expected CompileError";
    } catch (const CompileError& e) {
        EXPECT_EQ(e.program_name(), "broken_program");
        EXPECT_NE(e.log().find("broken_program(2)"), std::string::npos) << e.log();
        EXPECT_NE(std::string(e.what()).find("error"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("broken_program"), std::string::npos) << e.what();
        EXPECT_EQ(e.options(), program.flags(CodeType::ptx));
        EXPECT_EQ(program.log(), e.log().substr(0, program.log().size()));
    }
}

TEST(Program, WarningsAreInTheLogAfterSuccess) {
    const std::string source = "__global__ void k() { int unused_variable; }\n";
    Program program(source, SourceType::cxx, options_for("sm_90"));
    program.compile(CodeType::ptx);
    EXPECT_NE(program.log().find("unused_variable"), std::string::npos) << program.log();
}

TEST(Program, CcclHeadersCompileOutOfTheBox) {
    const std::string source = R"(
#include <cuda/std/complex>
extern "C" __global__ void magnitude(cuda::std::complex<float>* z, float* out) {
    out[threadIdx.x] = cuda::std::abs(z[threadIdx.x]);
}
)";
    Program program(source, SourceType::cxx, options_for("sm_90"));
    EXPECT_NO_THROW(program.compile(CodeType::ptx)) << program.log();

    ProgramOptions without = options_for("sm_90");
    without.toolkit_include_path = false;
    Program bare(source, SourceType::cxx, without);
    EXPECT_THROW(bare.compile(CodeType::ptx), CompileError);
}

TEST(Program, OptionsBecomeFlagsInOrder) {
    ProgramOptions options = options_for("90");
    options.relocatable_device_code = true;
    options.lineinfo = true;
    options.max_register_count = 32;
    options.fma = false;
    options.define_macro = {{"VALUE", "3"}, {"FLAG", std::nullopt}};
    options.std = "c++17";
    options.diag_suppress = {177};
    options.toolkit_include_path = false;
    options.extra_flags = {"--extra-raw"};
    Program program("__global__ void k() {}", SourceType::cxx, options);
    EXPECT_EQ(program.flags(CodeType::ptx),
              (std::vector<std::string>{"-arch=sm_90", "--relocatable-device-code=true",
                                        "--generate-line-info", "--maxrregcount=32", "--fmad=false",
                                        "--define-macro=VALUE=3", "--define-macro=FLAG",
                                        "--std=c++17", "--diag-suppress=177", "--pch",
                                        "--pch-verbose=false", "--extra-raw"}));
    EXPECT_EQ(program.backend(), "NVRTC");
}

TEST(Program, MacrosReachTheSource) {
    const std::string source = R"(
#if !defined(WIDTH) || WIDTH != 7
#error WIDTH must be 7
#endif
extern "C" __global__ void k() {}
)";
    ProgramOptions options = options_for("sm_90");
    options.define_macro = {{"WIDTH", "7"}};
    EXPECT_NO_THROW(Program(source, SourceType::cxx, options).compile(CodeType::ptx));
    EXPECT_THROW(Program(source, SourceType::cxx, options_for("sm_90")).compile(CodeType::ptx),
                 CompileError);
}

TEST(Program, IncludePathIsSearched) {
    test::TempDir dir;
    test::write_file(dir.path() / "answer.h", "#define ANSWER 42\n");
    const std::string source =
        "#include \"answer.h\"\nextern \"C\" __global__ void k(int* out) { *out = ANSWER; }\n";
    ProgramOptions options = options_for("sm_90");
    options.include_path = {dir.path().string()};
    EXPECT_NO_THROW(Program(source, SourceType::cxx, options).compile(CodeType::cubin));
}

TEST(Program, ATimeTraceFromAnEarlierCompileIsReplaced) {
    // ptxas fails on a trace left at the same name ("Parsed trace file not in expected format").
    test::TempDir dir;
    const std::string source = "extern \"C\" __global__ void k(int* out) { *out = 1; }\n";
    ProgramOptions options = options_for("sm_90");
    options.fdevice_time_trace = (dir.path() / "trace").string();
    for (int i = 0; i < 2; ++i) {
        const auto before = std::filesystem::file_time_type::clock::now();
        EXPECT_NO_THROW(Program(source, SourceType::cxx, options).compile(CodeType::cubin)) << "compile " << i;
        const std::filesystem::path written = dir.path() / "trace.json";  // NVRTC appends ".json"
        ASSERT_TRUE(std::filesystem::exists(written)) << "compile " << i;
        EXPECT_GE(std::filesystem::last_write_time(written) + std::chrono::seconds(1), before);
        EXPECT_NE(test::read_file(written).find("traceEvents"), std::string::npos);
    }
}

TEST(Program, PtxProgramCompilesToCubin) {
    ObjectCode ptx = Program(kTwoKernels, SourceType::cxx, options_for("sm_90")).compile(CodeType::ptx);
    Program program(std::string(ptx.code()), SourceType::ptx, options_for("sm_90", "from_ptx"));
    EXPECT_EQ(program.backend(), "nvJitLink");
    ObjectCode cubin = program.compile(CodeType::cubin);
    EXPECT_EQ(cubin.code_type(), CodeType::cubin);
    EXPECT_EQ(cubin.name(), "from_ptx");
    EXPECT_EQ(elf_header(cubin.code()).e_machine, 190);
    CodeInfo info = inspect_code(cubin.code());
    EXPECT_EQ(info.arch, "sm_90");
    EXPECT_EQ(info.kernels, (std::vector<std::string>{"add_one", "twice"}));
    EXPECT_THROW(program.compile(CodeType::ltoir), InvalidArgumentError);
}

TEST(Program, UnknownArchIsAClearError) {
    Program program(kTwoKernels, SourceType::cxx, options_for("sm_12"));
    try {
        program.compile(CodeType::cubin);
        FAIL() << "expected CompileError";
    } catch (const CompileError& e) {
        EXPECT_NE(std::string(e.what()).find("arch"), std::string::npos) << e.what();
        EXPECT_NE(e.log().find("NVRTC_ERROR_INVALID_OPTION"), std::string::npos) << e.log();
    }
    EXPECT_THROW(Program(kTwoKernels, SourceType::cxx, options_for("volta")).compile(CodeType::ptx),
                 InvalidArgumentError);
}

TEST(Program, UnsetArchWithoutADeviceSaysToSetIt) {
    if (test::gpu_unavailable_reason().empty()) GTEST_SKIP() << "a device is present (GPU test covers it)";
    Program program(kTwoKernels, SourceType::cxx);
    try {
        program.flags(CodeType::cubin);
        FAIL() << "expected InvalidArgumentError";
    } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("set arch"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("default_program"), std::string::npos) << e.what();
    }
    EXPECT_THROW(program.compile(CodeType::ptx), InvalidArgumentError);
}

// An -arch given among the extra flags, as jitify and NVRTC take it, is the target when `arch` is
// unset: no device is asked, and the flags hold one -arch.
TEST(Program, AnArchAmongTheExtraFlagsIsTheTargetWhenArchIsUnset) {
    for (const std::vector<std::string>& extra :
         {std::vector<std::string>{"-arch=sm_90"}, {"--gpu-architecture=sm_90"}, {"-arch", "sm_90"},
          {"-arch=sm_80", "-arch=sm_90"}}) {
        ProgramOptions options;
        options.name = "extra_arch";
        options.extra_flags = extra;
        Program program(kTwoKernels, SourceType::cxx, options);
        EXPECT_EQ(resolve_arch(options), "sm_90");
        const std::vector<std::string> flags = program.flags(CodeType::ptx);
        EXPECT_EQ(std::count_if(flags.begin(), flags.end(),
                                [](const std::string& flag) { return flag.starts_with("-arch=sm_"); }),
                  static_cast<long>(std::count_if(extra.begin(), extra.end(), [](const std::string& flag) {
                      return flag.starts_with("-arch=sm_");
                  })));
        const std::string ptx(program.compile(CodeType::ptx).code());
        EXPECT_NE(ptx.find(".target sm_90"), std::string::npos) << extra.front();
    }
    // Set, `arch` is the target; an -arch among the extra flags that names another one would be
    // what NVRTC compiles for (the last it is given): refused, by the flags and the compile alike.
    ProgramOptions both = options_for("sm_80");
    both.extra_flags = {"-arch=sm_90"};
    EXPECT_THROW(resolve_arch(both), InvalidArgumentError);
    EXPECT_THROW(Program(kTwoKernels, SourceType::cxx, both).compile(CodeType::ptx), InvalidArgumentError);
    both.extra_flags = {"--gpu-architecture", "sm_80"};
    EXPECT_EQ(resolve_arch(both), "sm_80");
    EXPECT_NE(std::string(Program(kTwoKernels, SourceType::cxx, both).compile(CodeType::ptx).code()).find(".target sm_80"),
              std::string::npos);
    EXPECT_EQ(arch_in_flags({"-I", "x", "-arch=compute_90", "--gpu-architecture", "sm_100"}), "sm_100");
    EXPECT_EQ(arch_in_flags({"-archx=1", "-arch"}), std::nullopt);
    LinkerOptions linker;
    linker.extra_flags = {"-arch=sm_90"};
    EXPECT_EQ(resolve_arch(linker), "sm_90");
}

TEST(Program, EmptySourceIsRefused) {
    EXPECT_THROW(Program("", SourceType::cxx), InvalidArgumentError);
    EXPECT_THROW(Program("  \n\t", SourceType::ptx), InvalidArgumentError);
}

TEST(Program, WhitespaceOnlySourceIsRefusedSayingSo) {
    for (SourceType type : {SourceType::cxx, SourceType::ptx, SourceType::nvvm}) {
        try {
            Program(" \t\r\n  \n", type, options_for("sm_90"));
            FAIL() << "expected InvalidArgumentError";
        } catch (const InvalidArgumentError& e) {
            const std::string message = e.what();
            EXPECT_NE(message.find("Program: empty"), std::string::npos) << message;
            EXPECT_NE(message.find("only whitespace"), std::string::npos) << message;
        }
    }
    // One visible character is a source (NVRTC then says what is wrong with it).
    EXPECT_NO_THROW(Program(" ;\n", SourceType::cxx, options_for("sm_90")));
}

TEST(Program, MissingIncludeNamesTheHeader) {
    Program program("#include \"no_such_header.cuh\"\n__global__ void k() {}\n", SourceType::cxx,
                    options_for("sm_90"));
    try {
        program.compile(CodeType::ptx);
        FAIL() << "expected CompileError";
    } catch (const CompileError& e) {
        EXPECT_NE(std::string(e.what()).find("no_such_header.cuh"), std::string::npos) << e.what();
    }
}

TEST(Program, GarbageAsPtxIsACompileError) {
    Program program("this is not PTX at all {", SourceType::ptx, options_for("sm_90", "garbage"));
    try {
        program.compile(CodeType::cubin);
        FAIL() << "expected CompileError";
    } catch (const CompileError& e) {
        EXPECT_EQ(e.program_name(), "garbage");
        EXPECT_FALSE(e.log().empty());
        EXPECT_NE(std::string(e.what()).find("nvJitLink"), std::string::npos) << e.what();
    }
}

TEST(Program, WrongTargetsAreRefused) {
    Program program(kTwoKernels, SourceType::cxx, options_for("sm_90"));
    EXPECT_THROW(program.compile(CodeType::fatbin), InvalidArgumentError);
    ProgramOptions lto = options_for("sm_90");
    lto.link_time_optimization = true;
    EXPECT_THROW(Program(kTwoKernels, SourceType::cxx, lto).compile(CodeType::cubin),
                 InvalidArgumentError);
    EXPECT_THROW(Program(kTwoKernels, SourceType::cxx, options_for("compute_90"))
                     .compile(CodeType::cubin),
                 InvalidArgumentError);
    EXPECT_NO_THROW(Program(kTwoKernels, SourceType::cxx, options_for("compute_90"))
                        .compile(CodeType::ptx));
    Program ptx(".version 8.0\n.target sm_90\n", SourceType::ptx, options_for("sm_90"));
    EXPECT_THROW(ptx.compile(CodeType::cubin, {"scale<float>"}), InvalidArgumentError);
}

// An unknown SourceType is refused when the Program is made, before any compiler sees it.
TEST(Program, OutOfRangeSourceTypeIsRefusedAtConstruction) {
    try {
        Program program(kTwoKernels, static_cast<SourceType>(7), options_for("sm_90", "odd"));
        FAIL() << "an out-of-range SourceType was accepted";
    } catch (const InvalidArgumentError& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find("unknown source type 7"), std::string::npos) << message;
        EXPECT_NE(message.find("program 'odd'"), std::string::npos) << message;
    }
}

// -dlto makes NVRTC produce LTO-IR: asking for PTX with it says so and what to ask for instead.
TEST(Program, PtxWithLinkTimeOptimizationSaysToAskForLtoir) {
    ProgramOptions lto = options_for("sm_90");
    lto.link_time_optimization = true;
    ProgramOptions lto_flag = options_for("sm_90");
    lto_flag.extra_flags = {"-dlto"};
    for (const ProgramOptions& options : {lto, lto_flag}) {
        Program program(kTwoKernels, SourceType::cxx, options);
        try {
            program.compile(CodeType::ptx);
            ADD_FAILURE() << "PTX with -dlto was accepted";
        } catch (const InvalidArgumentError& e) {
            const std::string message = e.what();
            EXPECT_NE(message.find("-dlto"), std::string::npos) << message;
            EXPECT_NE(message.find("LTO-IR, not PTX"), std::string::npos) << message;
            EXPECT_NE(message.find("CodeType::ltoir"), std::string::npos) << message;
        }
        EXPECT_EQ(program.compile(CodeType::ltoir).code_type(), CodeType::ltoir);
    }
}

TEST(Program, CompilesAgainForAnotherTarget) {
    Program program(kTwoKernels, SourceType::cxx, options_for("sm_90"));
    ObjectCode a = program.compile(CodeType::ptx);
    ObjectCode b = program.compile(CodeType::cubin);
    EXPECT_EQ(a.code_type(), CodeType::ptx);
    EXPECT_EQ(b.code_type(), CodeType::cubin);
    EXPECT_EQ(program.compile(CodeType::ptx), a) << "compiling is deterministic";
}

TEST(Program, EightThreadsCompileAtOnce) {
    constexpr int kThreads = 8;
    std::vector<std::thread> threads;
    std::atomic<int> succeeded{0};
    std::vector<std::string> failures(kThreads);
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([t, &succeeded, &failures] {
            try {
                const std::string name = "kernel_" + std::to_string(t);
                const std::string source = "extern \"C\" __global__ void " + name +
                                           "(int* out) { *out = " + std::to_string(t) + "; }\n";
                Program program(source, SourceType::cxx, options_for("sm_90", name));
                ObjectCode cubin = program.compile(CodeType::cubin);
                if (inspect_code(cubin.code()).kernels == std::vector<std::string>{name})
                    ++succeeded;
                else
                    failures[t] = "wrong kernels in cubin";
            } catch (const std::exception& e) {
                failures[t] = e.what();
            }
        });
    }
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(succeeded.load(), kThreads);
    for (int t = 0; t < kThreads; ++t) EXPECT_TRUE(failures[t].empty()) << t << ": " << failures[t];
}

}  // namespace
