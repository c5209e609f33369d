// Cache keys that cover included headers: editing a header the program includes gives new code;
// extra_digest stands in for the headers; where neither works the code is not cached.
#include "test_support.hpp"

#include "cudacore/cached_compile.hpp"
#include "cudacore/disk_program_cache.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/memory_program_cache.hpp"
#include "cudacore/program.hpp"
#include "cudacore/warnings.hpp"

#include <algorithm>
#include <filesystem>
#include <thread>
#include <optional>
#include <vector>

namespace {

using namespace cudacore;

const char* const including_kernel = R"(
#include "value.h"
extern "C" __global__ void store(int* out) { *out = STORED_VALUE; }
)";

ProgramOptions options_for(const test::TempDir& dir) {
    ProgramOptions options;
    options.arch = "sm_90";
    options.name = "store.cu";
    options.include_path = {(dir.path() / "include").string()};
    return options;
}

void write_header(const test::TempDir& dir, int value) {
    std::filesystem::create_directories(dir.path() / "include");
    test::write_file(dir.path() / "include" / "value.h",
                     "#define STORED_VALUE " + std::to_string(value) + "\n");
}

TEST(HeaderCache, CompileReportsTheHeadersItRead) {
    test::TempDir dir;
    write_header(dir, 7);
    Program program(including_kernel, SourceType::cxx, options_for(dir));
    std::vector<std::string> headers;
    program.compile(CodeType::ptx, {}, headers);
    const std::string header = (dir.path() / "include" / "value.h").string();
    EXPECT_NE(std::find(headers.begin(), headers.end(), header), headers.end())
        << "headers read: " << headers.size();
    EXPECT_TRUE(std::is_sorted(headers.begin(), headers.end()));
    // No trace left behind, and the plain flags carry no trace option.
    for (const auto& flag : program.flags(CodeType::ptx)) {
        EXPECT_EQ(flag.find("time-trace"), std::string::npos) << flag;
    }
}

// The headers come from a front-end pass of their own (without PCH, which would hide them), and
// the compile that makes the code is the plain one: it uses the PCH plain compiles make, and
// gives their bytes. A PCH made less than a second before a header it covers was changed, or
// after, may hold the old header (NVRTC does not check): then the code is made again without it.
TEST(HeaderCache, HeadersAreReportedWhereAPrecompiledHeaderIsUsed) {
    test::TempDir dir;
    write_header(dir, 31);
    // The header must predate the PCH by more than the second file times are trusted to.
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    ProgramOptions options = options_for(dir);
    options.name = "store_pch.cu";
    options.pch = true;
    options.pch_dir = (dir.path() / "pch").string();
    std::filesystem::create_directories(dir.path() / "pch");
    Program maker(including_kernel, SourceType::cxx, options);
    maker.compile(CodeType::ptx);
    Program user(including_kernel, SourceType::cxx, options);
    const ObjectCode plain = user.compile(CodeType::ptx);
    // Only meaningful where plain compiles make and use the PCH.
    ASSERT_EQ(maker.pch_status().outcome, PchOutcome::created) << maker.pch_status().reason;
    ASSERT_EQ(user.pch_status().outcome, PchOutcome::used) << user.pch_status().reason;

    Program recorded(including_kernel, SourceType::cxx, options);
    std::vector<std::string> headers;
    const ObjectCode code = recorded.compile(CodeType::ptx, {}, headers);
    EXPECT_EQ(code.code(), plain.code());
    const std::string header = (dir.path() / "include" / "value.h").string();
    EXPECT_NE(std::find(headers.begin(), headers.end(), header), headers.end())
        << "headers read: " << headers.size();
    EXPECT_EQ(recorded.pch_status().outcome, PchOutcome::used) << recorded.pch_status().reason;

    // Edited: the PCH still holds 31; the recorded compile does not trust it.
    write_header(dir, 32);
    Program edited(including_kernel, SourceType::cxx, options);
    const ObjectCode fresh = edited.compile(CodeType::ptx, {}, headers);
    EXPECT_NE(fresh.code().find("32;"), std::string_view::npos) << fresh.code();
    EXPECT_NE(edited.pch_status().outcome, PchOutcome::used);
    EXPECT_NE(edited.pch_status().reason.find("older than an edit of a header"), std::string::npos)
        << edited.pch_status().reason;
}

TEST(HeaderCache, EditingAnIncludedHeaderGivesNewCodeInMemoryAndOnDisk) {
    test::TempDir dir;
    MemoryProgramCache memory;
    DiskProgramCache disk(dir.path() / "cache");
    for (ProgramCache* cache : {static_cast<ProgramCache*>(&memory),
                                static_cast<ProgramCache*>(&disk)}) {
        write_header(dir, 1234567);
        Program first(including_kernel, SourceType::cxx, options_for(dir));
        const ObjectCode one = compile_cached(first, CodeType::ptx, {}, {.cache = cache});
        EXPECT_NE(one.code().find("1234567"), std::string_view::npos);

        // Unchanged header: a hit, the same code.
        Program again(including_kernel, SourceType::cxx, options_for(dir));
        const std::uint64_t hits = cache->stats().hits;
        EXPECT_EQ(compile_cached(again, CodeType::ptx, {}, {.cache = cache}).code(), one.code());
        EXPECT_GT(cache->stats().hits, hits);

        // Same source, same options, edited header (same size, so only the contents differ).
        write_header(dir, 7654321);
        Program second(including_kernel, SourceType::cxx, options_for(dir));
        const ObjectCode two = compile_cached(second, CodeType::ptx, {}, {.cache = cache});
        EXPECT_NE(two.code().find("7654321"), std::string_view::npos)
            << "stale code returned after the header changed";
        EXPECT_EQ(two.code().find("1234567"), std::string_view::npos);
    }
}

// Toolkit headers are digested once per process; the program's own headers are still checked at
// every lookup, however many hits came before.
TEST(HeaderCache, RepeatedHitsStillFollowTheProgramsOwnHeaders) {
    test::TempDir dir;
    MemoryProgramCache cache;
    const std::string source = std::string("#include <cuda/std/limits>\n") + including_kernel;
    write_header(dir, 1111);
    ProgramOptions options = options_for(dir);
    Program first(source, SourceType::cxx, options);
    const ObjectCode one = compile_cached(first, CodeType::ptx, {}, {.cache = &cache});
    for (int i = 0; i < 3; ++i) {
        Program again(source, SourceType::cxx, options);
        const std::optional<ObjectCode> hit = find_cached(again, CodeType::ptx, {}, {.cache = &cache});
        ASSERT_TRUE(hit.has_value()) << "lookup " << i;
        EXPECT_EQ(hit->code(), one.code());
    }
    write_header(dir, 2222);
    Program edited(source, SourceType::cxx, options);
    EXPECT_FALSE(find_cached(edited, CodeType::ptx, {}, {.cache = &cache}).has_value())
        << "stale code found after the program's own header changed";
    const ObjectCode two = compile_cached(edited, CodeType::ptx, {}, {.cache = &cache});
    EXPECT_NE(two.code().find("2222"), std::string_view::npos);
}

TEST(HeaderCache, FindCachedNeverCompilesAndFollowsTheHeaders) {
    test::TempDir dir;
    DiskProgramCache cache(dir.path() / "cache");
    write_header(dir, 2468);
    Program program(including_kernel, SourceType::cxx, options_for(dir));
    EXPECT_FALSE(find_cached(program, CodeType::ptx, {}, {.cache = &cache}).has_value());  // nothing compiled yet
    const ObjectCode compiled = compile_cached(program, CodeType::ptx, {}, {.cache = &cache});

    // Another process (a second cache object on the same folder) finds the same code.
    DiskProgramCache other(dir.path() / "cache");
    Program same(including_kernel, SourceType::cxx, options_for(dir));
    const std::optional<ObjectCode> found = find_cached(same, CodeType::ptx, {}, {.cache = &other});
    ASSERT_TRUE(found.has_value());
    EXPECT_EQ(found->code(), compiled.code());

    // An edited header: a miss, not the stale code.
    write_header(dir, 1357);
    EXPECT_FALSE(find_cached(same, CodeType::ptx, {}, {.cache = &other}).has_value());
    // Another target or name list is another key.
    EXPECT_FALSE(find_cached(same, CodeType::cubin, {}, {.cache = &other}).has_value());
}

TEST(HeaderCache, ExtraDigestStandsForTheHeaders) {
    test::TempDir dir;
    write_header(dir, 11);
    MemoryProgramCache cache;
    // Without PCH: NVRTC's automatic PCH, made by the first compile, is used again after the
    // header is edited in this process (stale code with or without a cache); this test is about
    // the key.
    ProgramOptions options = options_for(dir);
    options.pch = false;
    Program program(including_kernel, SourceType::cxx, options);
    const ObjectCode v1 = compile_cached(program, CodeType::ptx, {}, {.cache = &cache, .extra_digest = "v1"});
    // The caller's digest is the key: an unchanged digest is a hit (even after an edit, by the
    // caller's promise), a new digest a miss.
    write_header(dir, 22);
    EXPECT_EQ(compile_cached(program, CodeType::ptx, {}, {.cache = &cache, .extra_digest = "v1"}).code(),
              v1.code());
    const ObjectCode v2 = compile_cached(program, CodeType::ptx, {}, {.cache = &cache, .extra_digest = "v2"});
    EXPECT_NE(v2.code().find("22"), std::string_view::npos);
    EXPECT_EQ(cache.stats().insertions, 2u);
}

TEST(HeaderCache, RefusesToCacheWhenTheHeadersCannotBeRecorded) {
    test::TempDir dir;
    write_header(dir, 5);
    ProgramOptions options = options_for(dir);
    options.fdevice_time_trace = (dir.path() / "my-trace").string();
    MemoryProgramCache cache;
    test::WarningLog log;
    Program program(including_kernel, SourceType::cxx, options);
    const ObjectCode code = compile_cached(program, CodeType::ptx, {}, {.cache = &cache});
    EXPECT_FALSE(code.code().empty());
    EXPECT_EQ(cache.stats().insertions, 0u);
    ASSERT_EQ(log.seen.size(), 1u);
    EXPECT_EQ(log.seen[0].kind, WarningKind::not_cached);
    EXPECT_NE(log.seen[0].message.find("fdevice_time_trace"), std::string::npos) << log.seen[0].message;
    std::vector<std::string> headers;
    EXPECT_THROW(program.compile(CodeType::ptx, {}, headers), InvalidArgumentError);
}

// A cache that reads nothing and cannot store anything.
class BrokenCache : public ProgramCache {
public:
    std::optional<ObjectCode> get(const CacheKey&) override {
        ++gets;
        throw CacheError("cannot read the test cache");
    }
    void put(const CacheKey&, const ObjectCode&) override {
        ++puts;
        throw CacheError("cannot store in the test cache");
    }
    CacheStats stats() const override { return {}; }
    void clear() override {}
    int gets = 0;
    int puts = 0;
};

// A cache that fails never fails the compile, on the header-keyed path too: every failure goes
// to on_cache_error, given in the options (beside extra_digest) or alone.
TEST(HeaderCache, ACacheThatFailsIsReportedAndTheCodeReturned) {
    test::TempDir dir;
    write_header(dir, 4242);
    BrokenCache cache;
    std::vector<std::string> reported;
    CompileOptions options;
    options.cache = &cache;
    options.on_cache_error = [&](const CacheError& e) { reported.push_back(e.what()); };
    Program program(including_kernel, SourceType::cxx, options_for(dir));
    const ObjectCode code = compile_cached(program, CodeType::ptx, {}, options);
    EXPECT_NE(code.code().find("4242"), std::string_view::npos);
    // One lookup (not again inside the single flight: no compile of this process stored anything
    // since), then the code's store; the list is not stored beside code that was not.
    EXPECT_EQ(cache.gets, 1);
    EXPECT_EQ(cache.puts, 1);
    ASSERT_EQ(reported.size(), 2u);
    EXPECT_NE(reported.back().find("cannot store"), std::string::npos) << reported.back();

    reported.clear();
    Program again(including_kernel, SourceType::cxx, options_for(dir));
    const ObjectCode code_again = compile_cached(again, CodeType::ptx, {}, {.cache = &cache, .on_cache_error = [&](const CacheError& e) { reported.push_back(e.what()); }});
    EXPECT_EQ(code_again.code(), code.code());
    EXPECT_EQ(reported.size(), 2u);
}

}  // namespace

namespace {

// NVRTC keeps the time trace of a failed compile open on its thread and writes it with the next
// compile, to ".json" in the working directory when that one is untraced: recording the headers
// of a compile that fails must end the trace itself.
TEST(HeaderCache, AFailedCompileLeavesNoTraceBehindInTheWorkingDirectory) {
    using namespace cudacore;
    test::TempDir dir;
    const std::filesystem::path previous = std::filesystem::current_path();
    std::filesystem::current_path(dir.path());
    MemoryProgramCache cache;
    ProgramOptions options;
    options.arch = "sm_90";
    Program failing("#include <no_such_header.h>\n", SourceType::cxx, options);
    EXPECT_THROW(compile_cached(failing, CodeType::ptx, {}, {.cache = &cache}), CompileError);
    Program plain("extern \"C\" __global__ void k() {}\n", SourceType::cxx, options);
    plain.compile(CodeType::ptx);
    const bool stray = std::filesystem::exists(dir.path() / ".json");
    std::filesystem::current_path(previous);
    EXPECT_FALSE(stray) << "a trace was written to the working directory";
}

}  // namespace
