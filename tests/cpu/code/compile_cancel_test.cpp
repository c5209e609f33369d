// Compiles given up through a CancellationToken (NVRTC's flow callback), CompileError's NVRTC
// status, and compile_many stopping the rest of its compiles after a failure. No GPU: explicit
// arch. Times are compared with a compile measured on the same machine, never with fixed bounds.
#include "test_support.hpp"

#include "cudacore/cache_activity.hpp"
#include "cudacore/cached_compile.hpp"
#include "cudacore/cancellation.hpp"
#include "cudacore/compile_many.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/header_bundle.hpp"
#include "cudacore/memory_program_cache.hpp"
#include "cudacore/program.hpp"
#include "cudacore/standard_headers.hpp"
#include "headers/bundle_folder.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>
#include <variant>

namespace {

using namespace cudacore;
using namespace cudacore::test;
using Clock = std::chrono::steady_clock;

// 2^(depth+1) class template instantiations: seconds of NVRTC's front end at depth 11.
std::string long_source(int depth) {
    return "template <int D, int I> struct Tree { static constexpr long long v = Tree<D - 1, 2 * I>::v + "
           "Tree<D - 1, 2 * I + 1>::v; };\n"
           "template <int I> struct Tree<0, I> { static constexpr long long v = I; };\n"
           "__global__ void k(long long* o) { *o = Tree<" + std::to_string(depth) + ", SEED>::v; }\n";
}

// Each call its own SEED, so that no compile is served from NVRTC's cache of an earlier one.
ProgramOptions long_options(const std::string& name) {
    static int seed = 0;
    ProgramOptions options;
    options.name = name;
    options.arch = "sm_90";
    options.pch = false;
    options.no_cache = true;
    options.define_macro = {{"SEED", std::to_string(++seed)}};
    return options;
}

constexpr int kDepth = 12;

// A thread that cancels `token` after `delay`, noting when in `cancelled_at` (joined by the
// caller, which reads `cancelled_at` after the join).
template <class Duration>
std::thread cancel_after(const CancellationToken& token, Duration delay, Clock::time_point& cancelled_at) {
    return std::thread([&token, delay, &cancelled_at] {
        std::this_thread::sleep_for(delay);
        cancelled_at = Clock::now();
        token.cancel();
    });
}

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// The time of one uncancelled compile of the long program, measured once.
double full_compile_seconds() {
    static const double measured = [] {
        Program program(long_source(kDepth), SourceType::cxx, long_options("long_full"));
        const auto start = Clock::now();
        program.compile(CodeType::cubin);
        return seconds_since(start);
    }();
    return measured;
}

TEST(CompileError, CarriesNvrtcStatus) {
    ProgramOptions options;
    options.arch = "sm_90";
    try {
        Program("__global__ void k() { not c++ }", SourceType::cxx, options).compile(CodeType::cubin);
        ADD_FAILURE() << "compiled";
    } catch (const CompileError& e) {
        EXPECT_EQ(e.nvrtc_status(), NVRTC_ERROR_COMPILATION);
    }
    options.extra_flags = {"--no-such-flag"};
    try {
        Program("__global__ void k() {}", SourceType::cxx, options).compile(CodeType::cubin);
        ADD_FAILURE() << "compiled";
    } catch (const CompileError& e) {
        EXPECT_EQ(e.nvrtc_status(), NVRTC_ERROR_INVALID_OPTION);
    }
}

TEST(CancellationToken, CopiesShareTheFlagAndChildrenFollowTheirParent) {
    CancellationToken token;
    const CancellationToken copy = token;
    const CancellationToken child = token.child();
    EXPECT_FALSE(copy.is_cancelled());
    child.cancel();
    EXPECT_FALSE(token.is_cancelled());  // a child's cancel leaves its parent
    token.cancel();
    EXPECT_TRUE(copy.is_cancelled());
    EXPECT_TRUE(token.child().is_cancelled());
    EXPECT_EQ(copy, token);
}

TEST(CompileCancel, ACancelledTokenThrowsBeforeCompiling) {
    CompileOptions options;
    options.cancellation.cancel();
    Program program("__global__ void k() {}", SourceType::cxx, long_options("pre_cancelled"));
    try {
        program.compile(CodeType::cubin, {}, options);
        ADD_FAILURE() << "compiled";
    } catch (const CompileCancelled& e) {
        EXPECT_EQ(e.nvrtc_status(), NVRTC_ERROR_CANCELLED);
        EXPECT_NE(std::string(e.what()).find("cancelled"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(std::holds_alternative<std::monostate>(program.handle()));  // NVRTC never ran
}

TEST(CompileCancel, ProgramCompileRefusesACache) {
    MemoryProgramCache cache;
    Program program("__global__ void k() {}", SourceType::cxx, long_options("with_cache"));
    EXPECT_THROW(program.compile(CodeType::cubin, {}, {.cache = &cache}), InvalidArgumentError);
}

// NVRTC 13.0 reads its flow callback only at fixed points: first at the end of the front end
// (parsing and instantiation), then between the passes after it. This program's front end ends
// early (0.3 s of a 1.3 s compile, on the machine it was written on), so a cancel at a tenth of
// the compile is seen at that first check; a program whose time goes into parsing headers is
// not (docs/compiling.md, "Cancelling a compile").
TEST(CompileCancel, ALongInstantiationReturnsSoonAfterCancel) {
    const double full = full_compile_seconds();
    CompileOptions options;
    Program program(long_source(kDepth), SourceType::cxx, long_options("long_cancelled"));
    Clock::time_point cancelled_at{};
    std::thread canceller = cancel_after(options.cancellation, std::chrono::duration<double>(full / 10), cancelled_at);
    const auto start = Clock::now();
    bool threw = false;
    try {
        program.compile(CodeType::cubin, {}, options);
    } catch (const CompileCancelled&) {
        threw = true;
    }
    const auto returned = Clock::now();
    canceller.join();
    EXPECT_TRUE(threw);
    const double latency = std::chrono::duration<double>(returned - cancelled_at).count();
    const double elapsed = std::chrono::duration<double>(returned - start).count();
    EXPECT_LT(latency, full / 4) << "full compile " << full << " s, returned " << latency << " s after cancel";
    EXPECT_LT(elapsed, full / 2) << "full compile " << full << " s";
}

TEST(CompileCancel, ACancelledCachedCompileStoresNothing) {
    const double full = full_compile_seconds();
    MemoryProgramCache cache;
    CompileOptions options{.cache = &cache};
    Program program(long_source(kDepth), SourceType::cxx, long_options("long_cached"));
    std::thread canceller([&] {
        std::this_thread::sleep_for(std::chrono::duration<double>(full / 10));
        options.cancellation.cancel();
    });
    EXPECT_THROW(compile_cached(program, CodeType::cubin, {}, options), CompileCancelled);
    canceller.join();
    EXPECT_EQ(cache.stats().insertions, 0u);
    EXPECT_EQ(cache.stats().entries, 0u);
    EXPECT_FALSE(find_cached(program, CodeType::cubin, {}, {.cache = &cache}).has_value());
}

// A cached compile waiting for another thread's compile of the same key gives up soon after its
// token is cancelled, without compiling (no compile has ended when it returns: the other one is
// still running); the other compile goes on and stores its entry.
TEST(CompileCancel, AWaitForAnotherThreadsCompileOfTheKeyGivesUpPromptly) {
    const double full = full_compile_seconds();
    MemoryProgramCache cache;
    const ProgramOptions options = long_options("long_shared");  // one SEED: one key
    Program first(long_source(kDepth), SourceType::cxx, options);
    Program waiter(long_source(kDepth), SourceType::cxx, options);
    const std::uint64_t compiles_before = cache_stats().compiles;
    std::atomic<bool> first_done{false};
    std::thread compiling([&] {
        compile_cached(first, CodeType::cubin, {}, {.cache = &cache});
        first_done = true;
    });
    std::this_thread::sleep_for(std::chrono::duration<double>(full / 10));  // the first one is compiling
    CompileOptions waiting{.cache = &cache};
    Clock::time_point cancelled_at{};
    std::thread canceller = cancel_after(waiting.cancellation, std::chrono::duration<double>(full / 10), cancelled_at);
    EXPECT_THROW(compile_cached(waiter, CodeType::cubin, {}, waiting), CompileCancelled);
    const auto returned = Clock::now();
    const std::uint64_t compiles_at_return = cache_stats().compiles;
    const bool first_done_at_return = first_done;
    canceller.join();
    const double latency = std::chrono::duration<double>(returned - cancelled_at).count();
    EXPECT_LT(latency, full / 4) << "full compile " << full << " s, returned " << latency << " s after cancel";
    EXPECT_FALSE(first_done_at_return) << "the first compile ended before the waiter returned";
    EXPECT_EQ(compiles_at_return, compiles_before) << "the waiter compiled";
    compiling.join();
    EXPECT_EQ(cache.stats().entries, 1u);  // the first compile stored its entry
    EXPECT_TRUE(find_cached(waiter, CodeType::cubin, {}, {.cache = &cache}).has_value());
}

// The programs compile_many ran: those whose NVRTC program exists (handle() is set by a compile,
// failed or not).
std::size_t compiles_run(const std::vector<Program>& programs) {
    std::size_t run = 0;
    for (const Program& program : programs) run += !std::holds_alternative<std::monostate>(program.handle());
    return run;
}

std::vector<Program> one_bad_then_long(std::size_t longs) {
    std::vector<Program> programs;
    ProgramOptions bad = long_options("bad");
    programs.emplace_back("__global__ void k() { not c++ }", SourceType::cxx, bad);
    for (std::size_t i = 0; i < longs; ++i)
        programs.emplace_back(long_source(kDepth), SourceType::cxx, long_options("long_" + std::to_string(i)));
    return programs;
}

TEST(CompileManyStop, AFailureStopsTheCompilesInFlightAndTheRest) {
    const double full = full_compile_seconds();
    std::vector<Program> programs = one_bad_then_long(8);
    const auto start = Clock::now();
    try {
        compile_many(programs, CodeType::cubin, {}, {.workers = 2});
        ADD_FAILURE() << "compiled";
    } catch (const CompileCancelled&) {
        ADD_FAILURE() << "the failure reported is a cancellation, not the failed program's";
    } catch (const CompileError& e) {
        EXPECT_EQ(e.program_name(), "bad");
        EXPECT_EQ(e.nvrtc_status(), NVRTC_ERROR_COMPILATION);
    }
    const double elapsed = seconds_since(start);
    // The failed program and the one beside it (cancelled in flight); none of the other seven.
    EXPECT_LE(compiles_run(programs), 2u);
    // Uncancelled, four compiles on two workers take twice a full compile; two compiles at once
    // on a loaded machine answer the callback less often than one alone.
    EXPECT_LT(elapsed, full) << "full compile " << full << " s";
}

TEST(CompileManyStop, TheCallersTokenCancelsEveryCompile) {
    const double full = full_compile_seconds();
    std::vector<Program> programs = one_bad_then_long(4);
    programs.erase(programs.begin());
    CompileOptions options{.workers = 2};
    std::thread canceller([&] {
        std::this_thread::sleep_for(std::chrono::duration<double>(full / 10));
        options.cancellation.cancel();
    });
    const auto start = Clock::now();
    EXPECT_THROW(compile_many(programs, CodeType::cubin, {}, options), CompileCancelled);
    const double elapsed = seconds_since(start);
    canceller.join();
    EXPECT_LE(compiles_run(programs), 2u);
    // Uncancelled, four compiles on two workers take twice a full compile; two compiles at once
    // on a loaded machine answer the callback less often than one alone.
    EXPECT_LT(elapsed, full) << "full compile " << full << " s";
}

TEST(CompileManyStop, ChildProcessesAreStoppedToo) {
    const double full = full_compile_seconds();
    std::vector<Program> programs = one_bad_then_long(4);
    const auto start = Clock::now();
    EXPECT_THROW(compile_many(programs, CodeType::cubin, {},
                              {.strategy = CompileStrategy::processes, .workers = 2}),
                 CompileError);
    EXPECT_LT(seconds_since(start), full / 2) << "full compile " << full << " s";
}

// The process's open descriptors.
std::size_t open_descriptors() {
    std::size_t count = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) ++count;
    return count;
}

// The ids of this process's children, running or not yet reaped (every thread's).
std::set<long> child_processes() {
    std::set<long> children;
    for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
        std::ifstream listed(task.path() / "children");
        for (long id = 0; listed >> id;) children.insert(id);
    }
    return children;
}

// A cancel ends the child processes with a signal: the call returns within the pool's poll
// (20 ms) and the kills, not at NVRTC's first flow callback; every child is reaped, every pipe
// closed, and nothing is stored. The bound is loose for a loaded two-core machine; a compile in
// this process takes most of a full compile to see the same cancel.
TEST(CompileManyStop, ACancelEndsTheChildProcessesPromptlyAndLeavesNothing) {
    const double full = full_compile_seconds();
    std::vector<Program> programs;
    for (int i = 0; i < 3; ++i)
        programs.emplace_back(long_source(kDepth), SourceType::cxx, long_options("child_" + std::to_string(i)));
    MemoryProgramCache cache;
    CompileOptions options{.strategy = CompileStrategy::processes, .workers = 2, .cache = &cache};
    const std::size_t descriptors_before = open_descriptors();
    const std::set<long> children_before = child_processes();
    Clock::time_point cancelled_at{};
    std::thread canceller = cancel_after(options.cancellation, std::chrono::duration<double>(full / 10), cancelled_at);
    EXPECT_THROW(compile_many(programs, CodeType::cubin, {}, options), CompileCancelled);
    const auto returned = Clock::now();
    canceller.join();
    const double latency = std::chrono::duration<double>(returned - cancelled_at).count();
    RecordProperty("seconds_after_cancel", std::to_string(latency));
    EXPECT_LT(latency, 1.0) << "full compile " << full << " s, returned " << latency << " s after cancel";
    EXPECT_EQ(child_processes(), children_before) << "a child left running or unreaped";
    EXPECT_EQ(open_descriptors(), descriptors_before) << "a pipe left open";
    EXPECT_EQ(cache.stats().insertions, 0u);
    EXPECT_EQ(cache.stats().entries, 0u);
}

// A compile whose header bundle's folder is being made by another process waits for that
// process's lock (up to a minute); a cancel ends the wait within its 10 ms polls, and the compile
// throws CompileCancelled without compiling.
TEST(CompileCancel, AWaitForABundleFoldersLockGivesUpPromptly) {
    TempDir cache_folder;
    ScopedEnv cache_dir("CUDACORE_CACHE_DIR", cache_folder.path().string());
    const HeaderBundle bundle = HeaderBundle::from_headers({{"cfg_lock.h", "#define V 3\n"}}, "locked");
    const std::filesystem::path root = cache_folder.path() / "header-bundles";
    std::filesystem::create_directories(root);
    std::filesystem::permissions(root, std::filesystem::perms::owner_all);
    const std::string lock_path = (root / ("." + detail::bundle_folder_name(bundle) + ".lock")).string();
    const int held = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    ASSERT_GE(held, 0);
    ASSERT_EQ(::flock(held, LOCK_EX), 0);  // as a maker in another process holds it
    ProgramOptions program_options;
    program_options.name = "locked.cu";
    program_options.arch = "sm_90";
    program_options.header_bundles = {bundle};
    Program program("#include <cfg_lock.h>\n__global__ void k(int* o) { *o = V; }\n", SourceType::cxx,
                    program_options);
    CompileOptions options;
    Clock::time_point cancelled_at{};
    std::thread canceller = cancel_after(options.cancellation, std::chrono::milliseconds(300), cancelled_at);
    const auto start = Clock::now();
    EXPECT_THROW(program.compile(CodeType::cubin, {}, options), CompileCancelled);
    const auto returned = Clock::now();
    canceller.join();
    ::close(held);
    EXPECT_GE(returned - start, std::chrono::milliseconds(300)) << "it did not wait for the lock";
    EXPECT_LT(std::chrono::duration<double>(returned - cancelled_at).count(), 1.0);
    // Not remembered as a folder that cannot be made: the next compile makes it and compiles.
    Program again("#include <cfg_lock.h>\n__global__ void k(int* o) { *o = V; }\n", SourceType::cxx,
                  program_options);
    EXPECT_NO_THROW(again.compile(CodeType::cubin));
    EXPECT_EQ(again.pch_status().reason.find("gave up"), std::string::npos) << again.pch_status().reason;
}

}  // namespace

namespace {

// The standard headers' folder (ProgramOptions::std_headers) is waited for the same way, before
// anything asks for the program's flags: a plain compile and a cached one (whose key reads the
// flags) each give up within the 10 ms polls of a cancel while another process holds its lock.
TEST(CompileCancel, AWaitForTheStandardHeadersFolderGivesUpPromptly) {
    TempDir cache_folder;
    ScopedEnv cache_dir("CUDACORE_CACHE_DIR", cache_folder.path().string());
    const std::filesystem::path root = cache_folder.path() / "header-bundles";
    std::filesystem::create_directories(root);
    std::filesystem::permissions(root, std::filesystem::perms::owner_all);
    const std::string lock_path = (root / ("." + detail::bundle_folder_name(standard_headers()) + ".lock")).string();
    const int held = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    ASSERT_GE(held, 0);
    ASSERT_EQ(::flock(held, LOCK_EX), 0);  // as a maker in another process holds it
    ProgramOptions program_options;
    program_options.name = "std_locked.cu";
    program_options.arch = "sm_90";
    program_options.std_headers = true;
    const std::string source = "#include <cstdint>\n__global__ void k(std::uint32_t* o) { *o = 3; }\n";
    MemoryProgramCache cache;
    for (const bool cached : {false, true}) {
        Program program(source, SourceType::cxx, program_options);
        CompileOptions options;
        if (cached) options.cache = &cache;
        Clock::time_point cancelled_at{};
        std::thread canceller = cancel_after(options.cancellation, std::chrono::milliseconds(300), cancelled_at);
        const auto start = Clock::now();
        if (cached)
            EXPECT_THROW(compile_cached(program, CodeType::cubin, {}, options), CompileCancelled);
        else
            EXPECT_THROW(program.compile(CodeType::cubin, {}, options), CompileCancelled);
        const auto returned = Clock::now();
        canceller.join();
        EXPECT_GE(returned - start, std::chrono::milliseconds(300)) << "it did not wait for the lock";
        EXPECT_LT(std::chrono::duration<double>(returned - cancelled_at).count(), 1.0)
            << (cached ? "compile_cached" : "Program::compile");
    }
    ::close(held);
    EXPECT_EQ(cache.stats().insertions, 0u);
    // The lock let go: the folder is made and the program compiles with the headers.
    Program again(source, SourceType::cxx, program_options);
    EXPECT_NO_THROW(again.compile(CodeType::cubin));
}

}  // namespace
