// The compilers' handles behind Program and Linker, Program::from_handle, the linker backend
// choice (which_backend, LinkerOptions::backend = driver and its option refusals) and the
// compiler version queries. No GPU needed: every test gives an explicit arch.
#include "test_support.hpp"

#include "cudacore/cache_key.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/linker.hpp"
#include "cudacore/program.hpp"
#include "cudacore/system.hpp"
#include "loader/compiler_apis.hpp"
#include "loader/driver_api.hpp"

#include <cuda.h>

#include <filesystem>
#include <string>
#include <variant>

namespace {

using namespace cudacore;
using cudacore::test::helper_path;
using cudacore::test::run_process;

constexpr const char* kScale = R"(
template <typename T> __global__ void scale(T* data, T factor) { data[threadIdx.x] *= factor; }
extern "C" __global__ void plain(int* data) { data[0] = 1; }
)";

constexpr const char* kPtx = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry ptx_kernel(.param .u64 out) {
    .reg .b64 %rd<2>;
    .reg .b32 %r<2>;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, 42;
    st.global.u32 [%rd1], %r1;
    ret;
}
)";

ProgramOptions options_for(const std::string& name) {
    ProgramOptions options;
    options.name = name;
    options.arch = "sm_90";
    return options;
}

std::string nvrtc_log_of(nvrtcProgram program) {
    const auto& api = detail::nvrtc();
    size_t size = 0;
    EXPECT_EQ(api.nvrtcGetProgramLogSize(program, &size), NVRTC_SUCCESS);
    std::string log(size, '\0');
    EXPECT_EQ(api.nvrtcGetProgramLog(program, log.data()), NVRTC_SUCCESS);
    if (!log.empty()) log.pop_back();
    return log;
}

// NVRTC's log less its "creating/using precompiled header file" lines, which Program::log()
// leaves out (Program::pch_status() reports them).
std::string without_pch_messages(const std::string& log) {
    std::string kept;
    std::size_t start = 0;
    while (start < log.size()) {
        std::size_t end = log.find('\n', start);
        end = end == std::string::npos ? log.size() : end + 1;
        const std::string line = log.substr(start, end - start);
        if (line.find("precompiled header file") == std::string::npos) kept += line;
        start = end;
    }
    return kept;
}

// ---- Program::handle ------------------------------------------------------------------------

TEST(ProgramHandle, EmptyBeforeCompileThenTheNvrtcProgramOfTheLastCompile) {
    Program program(kScale, SourceType::cxx, options_for("handles"));
    EXPECT_TRUE(std::holds_alternative<std::monostate>(program.handle()));
    ObjectCode code = program.compile(CodeType::ptx, {"scale<float>"});
    ASSERT_TRUE(std::holds_alternative<nvrtcProgram>(program.handle()));
    nvrtcProgram raw = std::get<nvrtcProgram>(program.handle());
    ASSERT_NE(raw, nullptr);
    // Still alive after compile(): NVRTC's own API answers on it, and agrees with cudacore.
    const char* lowered = nullptr;
    ASSERT_EQ(detail::nvrtc().nvrtcGetLoweredName(raw, "scale<float>", &lowered), NVRTC_SUCCESS);
    EXPECT_EQ(std::string(lowered), code.symbol_map().at("scale<float>"));
    EXPECT_EQ(without_pch_messages(nvrtc_log_of(raw)), program.log());

    // A copy shares it: the next compile() of either replaces it for both with its own program.
    Program copy = program;
    EXPECT_EQ(std::get<nvrtcProgram>(copy.handle()), raw);
    program.compile(CodeType::ptx, {"scale<double>"});
    nvrtcProgram second = std::get<nvrtcProgram>(program.handle());
    ASSERT_EQ(detail::nvrtc().nvrtcGetLoweredName(second, "scale<double>", &lowered), NVRTC_SUCCESS);
    EXPECT_NE(std::string(lowered).find("scale"), std::string::npos);
    EXPECT_EQ(std::get<nvrtcProgram>(copy.handle()), second);
}

TEST(ProgramHandle, KeptAfterAFailedCompileWithItsLog) {
    Program program("__global__ void broken() { undefined_name(); }", SourceType::cxx,
                    options_for("broken"));
    EXPECT_THROW(program.compile(CodeType::ptx), CompileError);
    ASSERT_TRUE(std::holds_alternative<nvrtcProgram>(program.handle()));
    const std::string log = nvrtc_log_of(std::get<nvrtcProgram>(program.handle()));
    EXPECT_NE(log.find("undefined_name"), std::string::npos) << log;
}

TEST(ProgramHandle, PtxProgramGivesItsLinkState) {
    if (!detail::nvjitlink_available()) GTEST_SKIP() << "nvJitLink is not available";
    Program program(kPtx, SourceType::ptx, options_for("ptx_handle"));
    EXPECT_TRUE(std::holds_alternative<std::monostate>(program.handle()));
    program.compile(CodeType::cubin);
    ASSERT_TRUE(std::holds_alternative<nvJitLinkHandle>(program.handle()));
    nvJitLinkHandle raw = std::get<nvJitLinkHandle>(program.handle());
    size_t size = 0;
    EXPECT_EQ(detail::nvjitlink().get_linked_cubin_size(raw, &size), NVJITLINK_SUCCESS);
    EXPECT_GT(size, 0u);
}

// ---- Program::from_handle -------------------------------------------------------------------

TEST(ProgramFromHandle, CompilesTheCallersProgramAndLeavesItToTheCaller) {
    const auto& api = detail::nvrtc();
    nvrtcProgram raw = nullptr;
    ASSERT_EQ(api.nvrtcCreateProgram(&raw, kScale, "user.cu", 0, nullptr, nullptr), NVRTC_SUCCESS);
    {
        Program program = Program::from_handle(raw, {.options = options_for("user")});
        EXPECT_TRUE(program.source().empty());
        EXPECT_EQ(std::get<nvrtcProgram>(program.handle()), raw);
        ObjectCode code = program.compile(CodeType::cubin, {"scale<int>"});
        EXPECT_EQ(code.code_type(), CodeType::cubin);
        EXPECT_EQ(code.name(), "user");
        EXPECT_NE(code.symbol_map().at("scale<int>").find("scale"), std::string::npos);
        // compile() used the wrapped program: it answers for the name expression.
        const char* lowered = nullptr;
        ASSERT_EQ(api.nvrtcGetLoweredName(raw, "scale<int>", &lowered), NVRTC_SUCCESS);
        EXPECT_EQ(std::string(lowered), code.symbol_map().at("scale<int>"));
        EXPECT_EQ(std::get<nvrtcProgram>(program.handle()), raw);
    }
    // Not owned: the Program is gone and the handle still works; the caller destroys it.
    size_t size = 0;
    EXPECT_EQ(api.nvrtcGetCUBINSize(raw, &size), NVRTC_SUCCESS);
    EXPECT_GT(size, 0u);
    EXPECT_EQ(api.nvrtcDestroyProgram(&raw), NVRTC_SUCCESS);
}

TEST(ProgramFromHandle, OwnedHandleIsDestroyedWithTheLastCopy) {
    nvrtcProgram raw = nullptr;
    ASSERT_EQ(detail::nvrtc().nvrtcCreateProgram(&raw, kScale, "owned.cu", 0, nullptr, nullptr),
              NVRTC_SUCCESS);
    std::optional<Program> copy;
    {
        Program program = Program::from_handle(raw, {.take_ownership = true, .options = options_for("owned")});
        copy = program;
    }
    // One copy left: the program is alive and compiles.
    EXPECT_EQ(copy->compile(CodeType::ptx).code_type(), CodeType::ptx);
    copy.reset();  // destroys it (a sanitizer build reports a leak or a double destroy otherwise)
}

TEST(ProgramFromHandle, HasNoCacheKeySinceItsSourceIsUnknown) {
    nvrtcProgram raw = nullptr;
    ASSERT_EQ(detail::nvrtc().nvrtcCreateProgram(&raw, kScale, "keyless.cu", 0, nullptr, nullptr),
              NVRTC_SUCCESS);
    Program program = Program::from_handle(raw, {.take_ownership = true, .options = options_for("keyless")});
    try {
        cache_key(program, CodeType::cubin);
        FAIL() << "no exception";
    } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("Program::from_handle"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("keyless"), std::string::npos) << e.what();
    }
}

TEST(ProgramFromHandle, NullHandleIsRefused) {
    try {
        Program::from_handle(nullptr, {.options = options_for("null_program")});
        FAIL() << "no exception";
    } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("null nvrtcProgram"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("null_program"), std::string::npos) << e.what();
    }
}

// ---- Linker::handle -------------------------------------------------------------------------

TEST(LinkerHandle, TheNvJitLinkHandleOfTheLastLinkStaysReadable) {
    if (!detail::nvjitlink_available()) GTEST_SKIP() << "nvJitLink is not available";
    LinkerOptions options;
    options.name = "handle_link";
    options.arch = "sm_90";
    options.backend = LinkerBackend::nvjitlink;
    Linker linker({ObjectCode::from_ptx(kPtx, "ptx_input")}, options);
    EXPECT_TRUE(std::holds_alternative<std::monostate>(linker.handle()));
    ObjectCode cubin = linker.link(CodeType::cubin);
    ASSERT_TRUE(std::holds_alternative<nvJitLinkHandle>(linker.handle()));
    size_t size = 0;
    ASSERT_EQ(detail::nvjitlink().get_linked_cubin_size(std::get<nvJitLinkHandle>(linker.handle()),
                                                        &size),
              NVJITLINK_SUCCESS);
    EXPECT_EQ(size, cubin.size());
}

TEST(LinkerHandle, KeptAfterAFailedLinkWithTheErrorLog) {
    if (!detail::nvjitlink_available()) GTEST_SKIP() << "nvJitLink is not available";
    LinkerOptions options;
    options.name = "bad_link";
    options.arch = "sm_90";
    Linker linker({ObjectCode::from_ptx(".version 8.0\n.target sm_90\nnot ptx at all", "bad")},
                  options);
    EXPECT_THROW(linker.link(), LinkError);
    ASSERT_TRUE(std::holds_alternative<nvJitLinkHandle>(linker.handle()));
    nvJitLinkHandle raw = std::get<nvJitLinkHandle>(linker.handle());
    size_t size = 0;
    ASSERT_EQ(detail::nvjitlink().get_error_log_size(raw, &size), NVJITLINK_SUCCESS);
    // The log cudacore read is the one the handle still gives.
    if (linker.error_log().empty()) EXPECT_LE(size, 1u);
    else EXPECT_EQ(size, linker.error_log().size() + 1) << linker.error_log();
}

// ---- backend choice -------------------------------------------------------------------------

TEST(LinkerBackendChoice, WhichBackendIsWhatAnAutomaticLinkerUses) {
    const LinkerBackend expected = detail::nvjitlink_available() ? LinkerBackend::nvjitlink
                                   : detail::driver_available()   ? LinkerBackend::driver
                                                                  : LinkerBackend::nvjitlink;
    EXPECT_EQ(Linker::which_backend(), expected);
    LinkerOptions options;
    options.arch = "sm_90";
    Linker linker({ObjectCode::from_ptx(kPtx)}, options);
    EXPECT_EQ(linker.backend_kind(), expected);
    EXPECT_EQ(linker.backend(), to_string(expected));
}

TEST(LinkerBackendChoice, WithoutNvJitLinkTheDriverIsChosenOnlyWhenPresent) {
    auto result = run_process({helper_path("loader_probe").string(), "which-backend"},
                              {{"CUDACORE_NVJITLINK_PATH", "/nonexistent/libnvJitLink-missing.so"}});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    const bool driver = result.out.find("driver yes") != std::string::npos;
    EXPECT_NE(result.out.find(driver ? "backend driver" : "backend nvJitLink"), std::string::npos)
        << result.out;
}

TEST(LinkerBackendChoice, WithNvJitLinkAutomaticChoosesIt) {
    auto result = run_process({helper_path("loader_probe").string(), "which-backend"});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_NE(result.out.find("backend nvJitLink"), std::string::npos) << result.out;
}

TEST(LinkerBackendChoice, Names) {
    EXPECT_EQ(to_string(LinkerBackend::automatic), "automatic");
    EXPECT_EQ(to_string(LinkerBackend::nvjitlink), "nvJitLink");
    EXPECT_EQ(to_string(LinkerBackend::driver), "driver");
}

LinkerOptions driver_options() {
    LinkerOptions options;
    options.name = "driver_link";
    options.arch = "sm_90";
    options.backend = LinkerBackend::driver;
    return options;
}

TEST(DriverLinker, ChosenPerLinkerEvenWithNvJitLinkPresent) {
    Linker linker({ObjectCode::from_ptx(kPtx)}, driver_options());
    EXPECT_EQ(linker.backend(), "driver");
    EXPECT_EQ(linker.backend_kind(), LinkerBackend::driver);
    EXPECT_TRUE(std::holds_alternative<std::monostate>(linker.handle()));
}

TEST(DriverLinker, OptionsBecomeJitOptions) {
    LinkerOptions options = driver_options();
    options.arch = "sm_90a";
    options.max_register_count = 32;
    options.optimization_level = 3;
    options.debug = false;
    options.lineinfo = true;
    options.verbose = true;
    Linker linker({ObjectCode::from_ptx(kPtx)}, options);
    const std::vector<std::string> expected = {
        "CU_JIT_TARGET=sm_90a", "CU_JIT_MAX_REGISTERS=32", "CU_JIT_OPTIMIZATION_LEVEL=3",
        "CU_JIT_GENERATE_DEBUG_INFO=0", "CU_JIT_GENERATE_LINE_INFO=1", "CU_JIT_LOG_VERBOSE=1"};
    EXPECT_EQ(linker.flags(), expected);
    // The same options through nvJitLink are flags of its own spelling.
    options.backend = LinkerBackend::nvjitlink;
    EXPECT_EQ(Linker({ObjectCode::from_ptx(kPtx)}, options).flags().front(), "-arch=sm_90a");
}

TEST(DriverLinker, NvJitLinkOnlyOptionsAreRefusedByName) {
    LinkerOptions options = driver_options();
    options.ftz = true;
    options.kernels_used = {"k"};
    options.extra_flags = {"-foo"};
    options.time = true;
    options.max_register_count = 32;  // supported: not named
    Linker linker({ObjectCode::from_ptx(kPtx)}, options);
    for (auto attempt : {0, 1}) {
        try {
            if (attempt == 0) linker.flags();
            else linker.link();
            FAIL() << "no exception";
        } catch (const InvalidArgumentError& e) {
            const std::string what = e.what();
            EXPECT_NE(what.find("driver_link"), std::string::npos) << what;
            EXPECT_NE(what.find("LinkerOptions::backend = driver"), std::string::npos) << what;
            EXPECT_NE(what.find("time, ftz"), std::string::npos) << what;
            EXPECT_NE(what.find("kernels_used"), std::string::npos) << what;
            EXPECT_NE(what.find("extra_flags"), std::string::npos) << what;
            EXPECT_EQ(what.find("max_register_count"), std::string::npos) << what;
        }
    }
}

TEST(DriverLinker, RefusesPtxTargetAndLtoIrInputWithoutNeedingADriver) {
    Linker to_ptx({ObjectCode::from_ptx(kPtx)}, driver_options());
    try {
        to_ptx.link(CodeType::ptx);
        FAIL() << "no exception";
    } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("only produces cubin"), std::string::npos) << e.what();
    }
    // Real LTO-IR: inputs are validated when the Linker is made, before any backend sees them.
    ProgramOptions lto_options = options_for("lto_unit");
    lto_options.link_time_optimization = true;
    ObjectCode lto_unit = Program(kScale, SourceType::cxx, lto_options).compile(CodeType::ltoir);
    Linker lto({ObjectCode::from_ptx(kPtx), lto_unit}, driver_options());
    try {
        lto.link();
        FAIL() << "no exception";
    } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("LTO-IR input 'lto_unit'"), std::string::npos)
            << e.what();
    }
}

TEST(DriverLinker, WithoutADriverLinkSaysSo) {
    if (detail::driver_available()) GTEST_SKIP() << "a driver is present (GPU tests link with it)";
    Linker linker({ObjectCode::from_ptx(kPtx)}, driver_options());
    EXPECT_THROW(linker.link(), NoDriverError);
    EXPECT_TRUE(std::holds_alternative<std::monostate>(linker.handle()));
}

TEST(DriverLinker, PtxProgramsUseTheAutomaticChoice) {
    // A PTX Program links through the automatic backend; its flags say which.
    Program program(kPtx, SourceType::ptx, options_for("ptx_program"));
    const std::vector<std::string> flags = program.flags(CodeType::cubin);
    ASSERT_FALSE(flags.empty());
    if (Linker::which_backend() == LinkerBackend::nvjitlink) EXPECT_EQ(flags.front(), "-arch=sm_90");
    else EXPECT_EQ(flags.front(), "CU_JIT_TARGET=sm_90");
}

// ---- versions -------------------------------------------------------------------------------

TEST(CompilerVersions, AreThoseOfTheLoadedLibraries) {
    const system::LibraryVersion nvrtc = system::nvrtc_version();
    // The toolkit the tests were built with is the one they load.
    EXPECT_EQ(nvrtc.major, CUDA_VERSION / 1000);
    EXPECT_EQ(nvrtc.minor, CUDA_VERSION % 1000 / 10);
    auto probe = run_process({helper_path("loader_probe").string(), "nvrtc-version"});
    EXPECT_NE(probe.out.find("nvrtc version " + std::to_string(nvrtc.major) + "." +
                             std::to_string(nvrtc.minor)),
              std::string::npos)
        << probe.out;
    if (detail::nvjitlink_available()) {
        const system::LibraryVersion nvjitlink = system::nvjitlink_version();
        EXPECT_EQ(nvjitlink.major, CUDA_VERSION / 1000);
        EXPECT_GE(nvjitlink, (system::LibraryVersion{12, 0}));
    }
}

// Where the compilers were loaded from, for a program to print: the loaded files' absolute paths,
// also when the loader found them by soname, and the files the variables name when they are set.
TEST(CompilerVersions, PathsAreTheFilesLoaded) {
    const std::filesystem::path nvrtc = system::nvrtc_path();
    EXPECT_TRUE(nvrtc.is_absolute()) << nvrtc;
    EXPECT_TRUE(std::filesystem::is_regular_file(nvrtc)) << nvrtc;
    EXPECT_EQ(nvrtc.filename().string().rfind("libnvrtc.so", 0), 0u) << nvrtc;
    if (!detail::nvjitlink_available()) GTEST_SKIP() << "nvJitLink is not installed";
    const std::filesystem::path nvjitlink = system::nvjitlink_path();
    EXPECT_TRUE(nvjitlink.is_absolute()) << nvjitlink;
    EXPECT_TRUE(std::filesystem::is_regular_file(nvjitlink)) << nvjitlink;
    EXPECT_EQ(nvjitlink.filename().string().rfind("libnvJitLink.so", 0), 0u) << nvjitlink;

    auto probe = run_process({helper_path("loader_probe").string(), "compiler-paths"},
                             {{"CUDACORE_NVRTC_PATH", nvrtc.string()},
                              {"CUDACORE_NVJITLINK_PATH", nvjitlink.string()}});
    EXPECT_EQ(probe.exit_code, 0) << probe.out << probe.err;
    EXPECT_NE(probe.out.find("nvrtc path " + nvrtc.string() + "\n"), std::string::npos)
        << probe.out;
    EXPECT_NE(probe.out.find("nvjitlink path " + nvjitlink.string() + "\n"), std::string::npos)
        << probe.out;
}

// nvFatbin and libNVVM are opened on demand: their versions say "not available" and why,
// rather than throw, when the library is missing; otherwise the version and the file.
TEST(CompilerVersions, OptionalLibrariesAnswerTheirVersionOrWhyNot) {
    for (const system::OptionalLibraryVersion& library : {system::nvfatbin_version(), system::nvvm_version()}) {
        if (library.available()) {
            EXPECT_GE(library.version->major, 1);
            EXPECT_FALSE(library.path.empty());
            EXPECT_TRUE(library.not_available.empty()) << library.not_available;
        } else {
            EXPECT_FALSE(library.not_available.empty());
            EXPECT_TRUE(library.path.empty()) << library.path;
        }
    }
    auto probe = run_process({helper_path("loader_probe").string(), "optional-versions"},
                             {{"CUDACORE_NVFATBIN_PATH", "/nonexistent/libnvfatbin-missing.so"},
                              {"CUDACORE_NVVM_PATH", "/nonexistent/libnvvm-missing.so"}});
    EXPECT_EQ(probe.exit_code, 0) << probe.out << probe.err;
    EXPECT_NE(probe.out.find("nvfatbin not available: "), std::string::npos) << probe.out;
    EXPECT_NE(probe.out.find("CUDACORE_NVFATBIN_PATH"), std::string::npos) << probe.out;
    EXPECT_NE(probe.out.find("nvvm not available: "), std::string::npos) << probe.out;
    EXPECT_NE(probe.out.find("CUDACORE_NVVM_PATH"), std::string::npos) << probe.out;
    const system::OptionalLibraryVersion nvvm = system::nvvm_version();
    if (nvvm.available()) {
        auto found = run_process({helper_path("loader_probe").string(), "optional-versions"});
        EXPECT_NE(found.out.find("nvvm available " + std::to_string(nvvm.version->major) + "." +
                                 std::to_string(nvvm.version->minor) + " from "),
                  std::string::npos)
            << found.out;
    }
}

TEST(CompilerVersions, MissingLibrariesAreLoaderErrors) {
    auto nvrtc = run_process({helper_path("loader_probe").string(), "nvrtc-version"},
                             {{"CUDACORE_NVRTC_PATH", "/nonexistent/libnvrtc-missing.so"}});
    EXPECT_EQ(nvrtc.exit_code, 2) << nvrtc.out << nvrtc.err;
    EXPECT_NE(nvrtc.out.find("CUDACORE_NVRTC_PATH"), std::string::npos) << nvrtc.out;
    auto nvjitlink = run_process({helper_path("loader_probe").string(), "nvjitlink-version"},
                                 {{"CUDACORE_NVJITLINK_PATH", "/nonexistent/libnvJitLink.so"}});
    EXPECT_EQ(nvjitlink.exit_code, 2) << nvjitlink.out << nvjitlink.err;
    EXPECT_NE(nvjitlink.out.find("CUDACORE_NVJITLINK_PATH"), std::string::npos) << nvjitlink.out;
}

}  // namespace
