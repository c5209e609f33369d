// Isolated links (LinkerOptions::isolated): nvJitLink in a worker process, so that an input
// that crashes it is a LinkError naming the input and the signal while this process goes on; a
// link that nvJitLink reports as successful with errors printed is a failure; PTX output asks
// for LTO-IR input by name. No GPU needed: every link gives an explicit arch.
#include "crafted_code.hpp"
#include "test_support.hpp"

#include "cudacore/code_inspection.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/linker.hpp"
#include "cudacore/program.hpp"

#include <sys/stat.h>

#include <cstring>

namespace {

using namespace cudacore;

constexpr const char* kScale =
    "extern \"C\" __global__ void scale(float* p, float f) { p[threadIdx.x] *= f; }\n";

ObjectCode compile(const char* source, const std::string& name, CodeType target, bool rdc) {
    ProgramOptions options;
    options.name = name;
    options.arch = "sm_90";
    options.relocatable_device_code = rdc;
    options.pch = false;
    ObjectCode code = Program(source, SourceType::cxx, options).compile(target);
    return ObjectCode::from_bytes(target, std::string(code.code()), name);
}

LinkerOptions isolated(const std::string& name = "isolated_link") {
    LinkerOptions options;
    options.name = name;
    options.arch = "sm_90";
    options.isolated = true;
    return options;
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

namespace {

TEST(IsolatedLink, LinksTheSameCodeAsAnInProcessLink) {
    const ObjectCode a = compile(kScale, "a.ltoir", CodeType::ltoir, true);
    LinkerOptions in_process = isolated();
    in_process.isolated = false;
    in_process.link_time_optimization = true;
    LinkerOptions options = in_process;
    options.isolated = true;
    const ObjectCode here = Linker({a}, in_process).link();
    Linker linker({a}, options);
    const ObjectCode there = linker.link();
    EXPECT_EQ(there.code(), here.code());
    EXPECT_EQ(inspect_code(there.code()).kernels, std::vector<std::string>{"scale"});
    EXPECT_TRUE(std::holds_alternative<std::monostate>(linker.handle()));  // none in this process
    EXPECT_EQ(linker.flags(), Linker({a}, in_process).flags());
}

// A relocatable cubin with an .nv.info attribute naming a symbol past the table (see
// crafted_code.hpp) crashes nvJitLink in whichever process links it: proven here in a child (a
// death test), then linked isolated from this process, which goes on.
TEST(IsolatedLink, AnInputThatCrashesNvJitLinkIsAnErrorNamingItAndTheSignal) {
    std::string bytes = test::with_nv_info_symbol_past_the_table(
        std::string(compile(kScale, "crafted.cubin", CodeType::cubin, true).code()));
    ASSERT_FALSE(bytes.empty()) << "no .nv.info section in the relocatable cubin";
    const ObjectCode crafted = ObjectCode::from_bytes(CodeType::cubin, std::move(bytes), "crafted.cubin");
    LinkerOptions in_process = isolated();
    in_process.isolated = false;
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(Linker({crafted}, in_process).link(), ::testing::KilledBySignal(SIGSEGV), "");

    Linker linker({crafted}, isolated());  // passes the structural checks
    try {
        linker.link();
        FAIL() << "the crafted cubin linked";
    } catch (const LinkError& e) {
        const std::string what = e.what();
        EXPECT_TRUE(contains(what, "nvJitLinkAddData(cubin 'crafted.cubin', ")) << what;
        EXPECT_TRUE(contains(what, "crashed the link worker process: killed by signal 11 "
                                   "(Segmentation fault)")) << what;
        EXPECT_TRUE(contains(e.log(), "killed by signal 11")) << e.log();
    }
    // This process is unharmed and links again.
    EXPECT_NO_THROW(Linker({compile(kScale, "ok.cubin", CodeType::cubin, true)}, isolated()).link());
}

// nvJitLink 13 prints "Multiple definition" on the process's standard output (PTX inputs) or
// error (cubin inputs) and reports success; the worker's output is seen, and the link fails.
TEST(IsolatedLink, MultipleDefinitionsFailTheLink) {
    const ObjectCode ptx = compile(kScale, "a.ptx", CodeType::ptx, false);
    const ObjectCode cubin = compile(kScale, "a.cubin", CodeType::cubin, true);
    for (const auto& [first, second] :
         {std::pair{ptx, ObjectCode::from_ptx(std::string(ptx.code()), "b.ptx")},
          std::pair{cubin, ObjectCode::from_cubin(std::string(cubin.code()), "b.cubin")}}) {
        try {
            Linker({first, second}, isolated()).link();
            FAIL() << "two definitions of 'scale' linked (" << first.name() << ")";
        } catch (const LinkError& e) {
            const std::string expected = "Multiple definition of 'scale' in '" + second.name() +
                                         "', first defined in '" + first.name() + "'";
            EXPECT_TRUE(contains(e.what(), expected)) << e.what();
            EXPECT_TRUE(contains(e.log(), "reported errors")) << e.log();
            EXPECT_FALSE(contains(e.log(), "@E@")) << e.log();
        }
    }
}

TEST(IsolatedLink, PtxOutputAsksForLtoIrInputByName) {
    const ObjectCode cubin = compile(kScale, "k.cubin", CodeType::cubin, true);
    for (bool isolate : {false, true}) {
        LinkerOptions options = isolated();
        options.isolated = isolate;
        test::expect_invalid([&] { Linker({cubin}, options).link(CodeType::ptx); },
                             {"PTX output needs LTO-IR input", "'k.cubin' is cubin"});
    }
    // LTO-IR alone: link-time optimization is implied for PTX output...
    const ObjectCode ltoir = compile(kScale, "k.ltoir", CodeType::ltoir, true);
    const ObjectCode ptx = Linker({ltoir}, isolated()).link(CodeType::ptx);
    EXPECT_TRUE(contains(std::string(ptx.code()), ".entry scale")) << ptx.code();
    // ...and refused by name when turned off.
    LinkerOptions no_lto = isolated();
    no_lto.link_time_optimization = false;
    test::expect_invalid([&] { Linker({ltoir}, no_lto).link(CodeType::ptx); },
                         {"PTX output needs link-time optimization"});
}

TEST(IsolatedLink, AHangingWorkerIsKilledAfterTheTimeLimit) {
    test::TempDir dir;
    const auto worker = dir.path() / "slow-worker";
    test::write_file(worker, "#!/bin/sh\nexec sleep 30\n");
    ::chmod(worker.c_str(), 0700);
    LinkerOptions options = isolated();
    options.worker_program = worker.string();
    options.isolated_timeout = std::chrono::milliseconds(300);
    const auto start = std::chrono::steady_clock::now();
    try {
        Linker({compile(kScale, "k.cubin", CodeType::cubin, true)}, options).link();
        FAIL() << "linked with a worker that never answers";
    } catch (const LinkError& e) {
        EXPECT_TRUE(contains(e.what(), "killed after the time limit of 300 ms")) << e.what();
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(IsolatedLink, TheDriverBackendAndAMissingWorkerAreRefused) {
    const ObjectCode cubin = compile(kScale, "k.cubin", CodeType::cubin, true);
    LinkerOptions driver = isolated();
    driver.backend = LinkerBackend::driver;
    test::expect_invalid([&] { Linker({cubin}, driver); }, {"cannot be isolated"});
    LinkerOptions missing = isolated();
    missing.worker_program = "/nonexistent/cudacore-link-worker";
    try {
        Linker({cubin}, missing).link();
        FAIL() << "linked without a worker";
    } catch (const LoaderError& e) {
        EXPECT_TRUE(contains(e.what(), "/nonexistent/cudacore-link-worker")) << e.what();
        EXPECT_TRUE(contains(e.what(), "CUDACORE_LINK_WORKER")) << e.what();
    }
}

// A worker that ends without a reply by exiting (nvJitLink's fatal errors exit, a sanitizer's
// report too) is a LinkError saying how it ended, like a crash, never another exception.
TEST(IsolatedLink, AWorkerThatExitsWithoutAReplyIsALinkError) {
    const ObjectCode cubin = compile(kScale, "k.cubin", CodeType::cubin, true);
    LinkerOptions exits = isolated();
    exits.worker_program = "/bin/false";
    try {
        Linker({cubin}, exits).link();
        FAIL() << "linked by a worker that only exits";
    } catch (const LinkError& e) {
        EXPECT_TRUE(contains(e.what(), "without a reply")) << e.what();
        EXPECT_TRUE(contains(e.what(), "status 1")) << e.what();
    }
}

}  // namespace
