// The memo behind the cache keys of one Program value (program.hpp, "Cache keys"): asking again for
// the same Program reuses what was computed for it, and never gives a wrong hit. Each test asks
// the SAME Program object again after something that must change the outcome: an edited header
// (same size, even with its mtime set back), a header created where the preprocessor looked and
// found nothing, another working directory, $CUDA_HOME or debug-source folder; and the memo is
// shared by copies and safe from many threads.
#include "test_support.hpp"

#include "cudacore/cache_key.hpp"
#include "cudacore/cached_compile.hpp"
#include "cudacore/disk_program_cache.hpp"
#include "cudacore/memory_program_cache.hpp"
#include "cudacore/program.hpp"
#include "cache/cached_entry.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace cudacore;
namespace fs = std::filesystem;
using test::ScopedEnv;
using test::ScopedWorkingDirectory;

const char* const including_kernel = R"(
#include "value.h"
extern "C" __global__ void store(int* out) { *out = STORED_VALUE; }
)";

// The PTX holds the stored value as a decimal immediate.
bool holds(const ObjectCode& code, int value) {
    return code.code().find(std::to_string(value)) != std::string_view::npos;
}

std::string header_defining(int value) {
    return "#define STORED_VALUE " + std::to_string(value) + "\n";
}

ProgramOptions options_with(std::vector<std::string> include_path) {
    ProgramOptions options;
    options.arch = "sm_90";
    options.name = "store.cu";
    options.include_path = std::move(include_path);
    return options;
}

// The key of a Program made afresh from the same value (its memo empty).
CacheKey fresh_key(const Program& program, CodeType target,
                   const std::vector<std::string>& names = {}) {
    return cache_key(Program(program.source(), program.source_type(), program.options()), target,
                     names);
}

// Sets a file's mtime (ctime becomes now: it cannot be set).
void set_mtime(const fs::path& path, const struct ::timespec& mtime) {
    const struct ::timespec times[2] = {{0, UTIME_OMIT}, mtime};
    ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
}

struct ::timespec mtime_of(const fs::path& path) {
    struct ::stat info {};
    EXPECT_EQ(::stat(path.c_str(), &info), 0) << path;
    return info.st_mtim;
}

TEST(ProgramKeyMemo, RememberedKeysEqualKeysComputedAfresh) {
    ProgramOptions options;
    options.arch = "sm_90";
    Program program("template <class T> __global__ void k(T* x) { *x = T(1); }", SourceType::cxx,
                    options);
    const std::vector<std::vector<std::string>> name_sets = {{}, {"k<int>"}, {"k<float>", "k<int>"},
                                                             {"k<int>", "k<float>"}};
    for (int round = 0; round < 2; ++round) {  // the second round comes from the memo
        for (CodeType target : {CodeType::ptx, CodeType::cubin, CodeType::ltoir}) {
            for (const auto& names : name_sets) {
                EXPECT_EQ(cache_key(program, target, names), fresh_key(program, target, names))
                    << to_string(target) << ", " << names.size() << " names, round " << round;
            }
        }
    }
    // Every combination keeps its own key.
    EXPECT_NE(cache_key(program, CodeType::ptx, {"k<float>", "k<int>"}),
              cache_key(program, CodeType::ptx, {"k<int>", "k<float>"}));
    EXPECT_NE(cache_key(program, CodeType::ptx), cache_key(program, CodeType::cubin));
}

TEST(ProgramKeyMemo, AnEditedHeaderOfTheSameSizeIsAMissForTheSameProgram) {
    test::TempDir dir;
    const fs::path header = dir.path() / "include" / "value.h";
    fs::create_directories(header.parent_path());
    test::write_file(header, header_defining(1111111));
    MemoryProgramCache cache;
    Program program(including_kernel, SourceType::cxx,
                    options_with({header.parent_path().string()}));
    ASSERT_TRUE(holds(compile_cached(program, CodeType::ptx, {}, {.cache = &cache}), 1111111));
    ASSERT_TRUE(holds(compile_cached(program, CodeType::ptx, {}, {.cache = &cache}), 1111111));  // a hit

    test::write_file(header, header_defining(2222222));  // within the same second, same size
    const ObjectCode edited = compile_cached(program, CodeType::ptx, {}, {.cache = &cache});
    EXPECT_TRUE(holds(edited, 2222222)) << "stale code after the header was edited";
    EXPECT_FALSE(holds(edited, 1111111));
}

// A header unchanged for seconds is read again at every lookup (its bytes, not its stamp): an edit
// that keeps its size and sets its mtime back, or a file of the same size and mtime put in its
// place, must still miss.
TEST(ProgramKeyMemo, ASettledHeaderEditedBehindItsSizeAndMtimeIsStillAMiss) {
    test::TempDir dir;
    const fs::path header = dir.path() / "include" / "value.h";
    fs::create_directories(header.parent_path());
    test::write_file(header, header_defining(3333333));
    std::this_thread::sleep_for(std::chrono::milliseconds(2200));  // settled: trusted by its stamp
    MemoryProgramCache cache;
    Program program(including_kernel, SourceType::cxx,
                    options_with({header.parent_path().string()}));
    ASSERT_TRUE(holds(compile_cached(program, CodeType::ptx, {}, {.cache = &cache}), 3333333));
    const std::uint64_t hits = cache.stats().hits;
    ASSERT_TRUE(holds(compile_cached(program, CodeType::ptx, {}, {.cache = &cache}), 3333333));
    ASSERT_EQ(cache.stats().hits, hits + 1);  // the code, under its first key

    // Same size, same mtime, same inode: only ctime and the contents differ.
    const struct ::timespec mtime = mtime_of(header);
    test::write_file(header, header_defining(4444444));
    set_mtime(header, mtime);
    const ObjectCode edited = compile_cached(program, CodeType::ptx, {}, {.cache = &cache});
    EXPECT_TRUE(holds(edited, 4444444)) << "stale code after an edit that kept size and mtime";

    // Another file of the same size and mtime renamed over it.
    const fs::path replacement = dir.path() / "value.h.new";
    test::write_file(replacement, header_defining(5555555));
    set_mtime(replacement, mtime);
    fs::rename(replacement, header);
    EXPECT_TRUE(holds(compile_cached(program, CodeType::ptx, {}, {.cache = &cache}), 5555555))
        << "stale code after the header was replaced by a file of the same size and mtime";
}

TEST(ProgramKeyMemo, AHeaderCreatedWhereTheLookupFoundNothingIsAMiss) {
    test::TempDir dir;
    const fs::path first = dir.path() / "first", second = dir.path() / "second";
    fs::create_directories(first);
    fs::create_directories(second);
    test::write_file(second / "value.h", header_defining(6060606));
    MemoryProgramCache cache;
    Program program(including_kernel, SourceType::cxx,
                    options_with({first.string(), second.string()}));
    ASSERT_TRUE(holds(compile_cached(program, CodeType::ptx, {}, {.cache = &cache}), 6060606));
    ASSERT_TRUE(holds(compile_cached(program, CodeType::ptx, {}, {.cache = &cache}), 6060606));

    // The first folder is searched first: a header created there is the one NVRTC now reads.
    test::write_file(first / "value.h", header_defining(7070707));
    EXPECT_FALSE(find_cached(program, CodeType::ptx, {}, {.cache = &cache}).has_value())
        << "a hit after a header appeared where the lookup had found nothing";
    EXPECT_TRUE(holds(compile_cached(program, CodeType::ptx, {}, {.cache = &cache}), 7070707));
    // And removing it again gives the first code back (a hit: that entry is still cached).
    fs::remove(first / "value.h");
    EXPECT_TRUE(holds(compile_cached(program, CodeType::ptx, {}, {.cache = &cache}), 6060606));
}

TEST(ProgramKeyMemo, AHeaderThatHasIncludeNowFindsIsAMiss) {
    test::TempDir dir;
    const fs::path include = dir.path() / "include";
    fs::create_directories(include);
    const char* source = R"(
#if __has_include("extra.h")
#include "extra.h"
#else
#define STORED_VALUE 8080808
#endif
extern "C" __global__ void store(int* out) { *out = STORED_VALUE; }
)";
    MemoryProgramCache cache;
    Program program(source, SourceType::cxx, options_with({include.string()}));
    ASSERT_TRUE(holds(compile_cached(program, CodeType::ptx, {}, {.cache = &cache}), 8080808));
    ASSERT_TRUE(holds(compile_cached(program, CodeType::ptx, {}, {.cache = &cache}), 8080808));
    test::write_file(include / "extra.h", header_defining(9090909));
    EXPECT_TRUE(holds(compile_cached(program, CodeType::ptx, {}, {.cache = &cache}), 9090909))
        << "stale code after __has_include found a new header";
}

TEST(ProgramKeyMemo, ChangedOptionsOrSourceMakeANewProgramWithItsOwnKey) {
    test::TempDir dir;
    const fs::path include = dir.path() / "include";
    fs::create_directories(include);
    test::write_file(include / "value.h",
                     "#ifndef STORED_VALUE\n#define STORED_VALUE 1212121\n#endif\n");
    MemoryProgramCache cache;
    Program program(including_kernel, SourceType::cxx, options_with({include.string()}));
    ASSERT_TRUE(holds(compile_cached(program, CodeType::ptx, {}, {.cache = &cache}), 1212121));

    ProgramOptions defined = program.options();
    defined.define_macro.push_back({"STORED_VALUE", "3434343"});
    Program with_macro(including_kernel, SourceType::cxx, defined);
    EXPECT_NE(cache_key(with_macro, CodeType::ptx), cache_key(program, CodeType::ptx));
    EXPECT_TRUE(holds(compile_cached(with_macro, CodeType::ptx, {}, {.cache = &cache}), 3434343));

    Program other_source(std::string(including_kernel) + "// another source\n", SourceType::cxx,
                         program.options());
    EXPECT_NE(cache_key(other_source, CodeType::ptx), cache_key(program, CodeType::ptx));
    EXPECT_EQ(cache_key(other_source, CodeType::ptx), fresh_key(other_source, CodeType::ptx));

    // Each still hits its own entry, and an assigned Program keys as the value it now holds.
    EXPECT_TRUE(holds(compile_cached(program, CodeType::ptx, {}, {.cache = &cache}), 1212121));
    Program assigned = program;
    assigned = with_macro;
    EXPECT_EQ(cache_key(assigned, CodeType::ptx), cache_key(with_macro, CodeType::ptx));
    EXPECT_TRUE(holds(compile_cached(assigned, CodeType::ptx, {}, {.cache = &cache}), 3434343));
}

// Copies share the memo: a header edit seen through one copy is seen through all.
TEST(ProgramKeyMemo, CopiesShareTheMemoAndEachSeesAnEdit) {
    test::TempDir dir;
    const fs::path include = dir.path() / "include";
    fs::create_directories(include);
    test::write_file(include / "value.h", header_defining(1313131));
    MemoryProgramCache cache;
    Program program(including_kernel, SourceType::cxx, options_with({include.string()}));
    const Program copy = program;
    ASSERT_TRUE(holds(compile_cached(program, CodeType::ptx, {}, {.cache = &cache}), 1313131));
    ASSERT_TRUE(holds(find_cached(copy, CodeType::ptx, {}, {.cache = &cache}).value(), 1313131));
    test::write_file(include / "value.h", header_defining(2424242));
    EXPECT_FALSE(find_cached(copy, CodeType::ptx, {}, {.cache = &cache}).has_value());
    EXPECT_TRUE(holds(compile_cached(program, CodeType::ptx, {}, {.cache = &cache}), 2424242));
    EXPECT_TRUE(holds(find_cached(copy, CodeType::ptx, {}, {.cache = &cache}).value(), 2424242));
}

// A relative program name resolves the source's quoted includes in the working directory.
TEST(ProgramKeyMemo, AnotherWorkingDirectoryIsAnotherSearch) {
    test::TempDir dir;
    const fs::path one = dir.path() / "one", two = dir.path() / "two";
    fs::create_directories(one);
    fs::create_directories(two);
    test::write_file(one / "value.h", header_defining(1515151));
    test::write_file(two / "value.h", header_defining(2626262));
    ScopedWorkingDirectory working(one);
    MemoryProgramCache cache;
    Program program(including_kernel, SourceType::cxx, options_with({}));
    ASSERT_TRUE(holds(compile_cached(program, CodeType::ptx, {}, {.cache = &cache}), 1515151));
    ASSERT_TRUE(holds(compile_cached(program, CodeType::ptx, {}, {.cache = &cache}), 1515151));
    working.change_to(two);
    EXPECT_TRUE(holds(compile_cached(program, CodeType::ptx, {}, {.cache = &cache}), 2626262))
        << "the header of the previous working directory was used";
    working.change_to(one);
    EXPECT_TRUE(holds(compile_cached(program, CodeType::ptx, {}, {.cache = &cache}), 1515151));

    // A program that looks for nothing in the working directory (angle includes only) compiles
    // the same anywhere: its hit holds in another one, with nothing compiled or stored.
    Program angled("#include <cuda/std/limits>\n__global__ void k(int* x) { *x = 1; }",
                   SourceType::cxx, options_with({}));
    const ObjectCode compiled = compile_cached(angled, CodeType::ptx, {}, {.cache = &cache});
    working.change_to(two);
    const CacheStats before = cache.stats();
    EXPECT_EQ(compile_cached(angled, CodeType::ptx, {}, {.cache = &cache}).code(), compiled.code());
    EXPECT_EQ(cache.stats().insertions, before.insertions);
    EXPECT_EQ(cache.stats().hits, before.hits + 1);
}

// $CUDA_HOME chooses the toolkit's folders (in the flags): read again at every call.
TEST(ProgramKeyMemo, AnotherCudaHomeIsAnotherKey) {
    test::TempDir dir;
    fs::create_directories(dir.path() / "include");
    test::write_file(dir.path() / "include" / "cuda_runtime.h", "// a toolkit's marker\n");
    Program program("__global__ void k() {}", SourceType::cxx, options_with({}));
    const CacheKey before = cache_key(program, CodeType::ptx);
    {
        ScopedEnv cuda_home("CUDA_HOME", dir.path().string());
        const CacheKey there = cache_key(program, CodeType::ptx);
        EXPECT_NE(there, before);
        EXPECT_EQ(there, fresh_key(program, CodeType::ptx));
    }
    EXPECT_EQ(cache_key(program, CodeType::ptx), before);
}

// A program compiled with debug information names its source file, in a folder read at each call.
TEST(ProgramKeyMemo, AnotherDebugSourceFolderIsAnotherKey) {
    test::TempDir dir;
    ProgramOptions options = options_with({});
    options.lineinfo = true;
    Program program("__global__ void k() {}", SourceType::cxx, options);
    ScopedEnv folder("CUDACORE_DEBUG_SOURCE_DIR", (dir.path() / "a").string());
    const CacheKey in_a = cache_key(program, CodeType::ptx);
    ::setenv("CUDACORE_DEBUG_SOURCE_DIR", (dir.path() / "b").string().c_str(), 1);
    const CacheKey in_b = cache_key(program, CodeType::ptx);
    EXPECT_NE(in_a, in_b);
    EXPECT_EQ(in_b, fresh_key(program, CodeType::ptx));
}

// One Program object (and copies of it) hit from many threads at once: every hit is the stored
// code, nothing is compiled or stored again, and the keys are the ones computed afresh.
TEST(ProgramKeyMemo, OneProgramHitFromManyThreadsAtOnce) {
    test::TempDir dir;
    const fs::path include = dir.path() / "include";
    fs::create_directories(include);
    test::write_file(include / "value.h", header_defining(1919191));
    MemoryProgramCache cache;
    Program program(including_kernel, SourceType::cxx, options_with({include.string()}));
    const ObjectCode compiled = compile_cached(program, CodeType::ptx, {}, {.cache = &cache});
    const CacheKey key = fresh_key(program, CodeType::ptx);
    const CacheKey cubin_key = fresh_key(program, CodeType::cubin, {"store"});
    const CacheStats before = cache.stats();

    constexpr int threads = 8, rounds = 200;
    std::atomic<int> wrong{0};
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
            // Odd threads use a copy (sharing the memo), even ones the object itself.
            Program copy = program;
            Program& mine = t % 2 ? copy : program;
            for (int i = 0; i < rounds; ++i) {
                if (compile_cached(mine, CodeType::ptx, {}, {.cache = &cache}).code() != compiled.code()) ++wrong;
                if (cache_key(mine, CodeType::ptx) != key) ++wrong;
                // Other arguments on the same memo, remembered and looked up concurrently.
                const std::vector<std::string> names{"store"};
                if (cache_key(mine, CodeType::cubin, names) != cubin_key) ++wrong;
            }
        });
    }
    for (auto& worker : workers) worker.join();
    EXPECT_EQ(wrong.load(), 0);
    const CacheStats after = cache.stats();
    EXPECT_EQ(after.misses, before.misses);
    EXPECT_EQ(after.insertions, before.insertions);
    EXPECT_EQ(after.hits, before.hits + 1u * threads * rounds);  // one lookup: the code's first key
}

}  // namespace
