// A cached compile is keyed by the files it was compiled from, or it is not cached: a header edited,
// or created earlier on the search path, after NVRTC read the headers and before the key is made,
// gives code that is returned but never stored, with a not_cached warning naming the file; the next
// compile through the cache then gives the code of the files as they are. The change is made at the
// moment it hurts: once NVRTC's two readers (the header pass and the compile) have closed the file,
// as inotify tells.
#include "test_support.hpp"

#include "cudacore/cached_compile.hpp"
#include "cudacore/disk_program_cache.hpp"
#include "cudacore/memory_program_cache.hpp"
#include "cudacore/program.hpp"
#include "cudacore/tiered_program_cache.hpp"
#include "cudacore/warnings.hpp"

#include <sys/inotify.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <string>
#include <thread>

namespace {

using namespace cudacore;
namespace fs = std::filesystem;

// A kernel whose value comes from cfg.h, with enough of <cuda/std> after it that the compile lasts
// well beyond the moment NVRTC has read cfg.h.
const char* const kernel_source = R"(
#include "cfg.h"
#include <cuda/std/tuple>
#include <cuda/std/functional>
#include <cuda/std/type_traits>
extern "C" __global__ void store(int* out) {
    cuda::std::tuple<int, long> t{MAGIC, 2};
    *out = cuda::std::get<0>(t);
}
)";

// Waits (bounded) until `path` has been closed after reading `count` times, then runs `change`.
// Watching starts before the compile: returns a future for the change's completion.
class ChangeAfterReads {
public:
    ChangeAfterReads(const fs::path& path, int count) : count_(count) {
        fd_ = ::inotify_init1(IN_CLOEXEC);
        watching_ = fd_ >= 0 && ::inotify_add_watch(fd_, path.c_str(), IN_CLOSE_NOWRITE) >= 0;
        EXPECT_TRUE(watching_) << "inotify cannot watch " << path;
    }
    ~ChangeAfterReads() { ::close(fd_); }

    // True once `count` reads were seen within `limit`.
    bool wait(std::chrono::milliseconds limit) {
        if (!watching_) return false;
        const auto end = std::chrono::steady_clock::now() + limit;
        int seen = 0;
        while (seen < count_) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                end - std::chrono::steady_clock::now());
            if (left.count() <= 0) return false;
            pollfd waiting{fd_, POLLIN, 0};
            if (::poll(&waiting, 1, static_cast<int>(left.count())) <= 0) continue;
            alignas(inotify_event) char buffer[4096];
            const ssize_t got = ::read(fd_, buffer, sizeof buffer);
            for (ssize_t at = 0; at < got;) {
                const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
                if (event->mask & IN_CLOSE_NOWRITE) ++seen;
                at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
            }
        }
        return true;
    }

private:
    int fd_ = -1;
    bool watching_ = false;
    int count_;
};

// Lets the file system's coarse clock move past what was just written, so that the next compile
// does not take it for a change made while it ran.
void let_the_clock_pass() { std::this_thread::sleep_for(std::chrono::milliseconds(30)); }

// Named in `dir`, whose quoted includes are looked for there (nothing else changes it).
ProgramOptions options_with(const test::TempDir& dir, const std::vector<fs::path>& folders) {
    ProgramOptions options;
    options.arch = "sm_90";
    options.name = (dir.path() / "view_store.cu").string();
    for (const auto& folder : folders) options.include_path.push_back(folder.string());
    return options;
}

bool holds(const ObjectCode& code, int value) {
    return std::string(code.code()).find(std::to_string(value)) != std::string::npos;
}

// Compiles through `cache` while `change` runs once NVRTC's readers are done with `watched`; then
// checks that the code was not stored, that the warning named `named`, and that the next compile
// through the cache gives the code of the files as they are now (`now_value`).
void expect_change_not_cached(ProgramCache& cache, const ProgramOptions& options,
                              const fs::path& watched, const std::function<void()>& change,
                              const fs::path& named, int old_value, int now_value) {
    test::WarningLog log;
    ChangeAfterReads reads(watched, 2);
    auto changer = std::async(std::launch::async, [&] {
        const bool read = reads.wait(std::chrono::seconds(60));
        change();
        return read;
    });
    Program program(kernel_source, SourceType::cxx, options);
    const ObjectCode first = compile_cached(program, CodeType::ptx, {}, {.cache = &cache});
    ASSERT_TRUE(changer.get()) << "NVRTC did not read " << watched << " twice";
    bool warned = false;
    for (const auto& warning : log.seen) {
        if (warning.kind == WarningKind::not_cached &&
            warning.message.find(named.string()) != std::string::npos)
            warned = true;
    }
    EXPECT_TRUE(warned) << "no not_cached warning naming " << named << " among "
                        << log.seen.size() << " warnings";

    let_the_clock_pass();
    // The value is compared, not the bytes: a plain compile may use the automatic PCH the first
    // compile made, which NVRTC does not check against a same-size edit within its second.
    Program again(kernel_source, SourceType::cxx, options);
    const ObjectCode cached = compile_cached(again, CodeType::ptx, {}, {.cache = &cache});
    EXPECT_TRUE(holds(cached, now_value)) << "the cache gave code of files that are gone";
    EXPECT_FALSE(holds(cached, old_value));
}

TEST(CompileView, AHeaderEditedAfterNvrtcReadItIsNotCached) {
    test::TempDir dir;
    const fs::path header = dir.path() / "include" / "cfg.h";
    fs::create_directories(header.parent_path());
    test::write_file(header, "#define MAGIC 1111\n");
    let_the_clock_pass();
    MemoryProgramCache cache;
    expect_change_not_cached(cache, options_with(dir, {dir.path() / "include"}), header,
                             [&] { test::write_file(header, "#define MAGIC 2222\n"); }, header, 1111, 2222);
}

TEST(CompileView, AHeaderCreatedEarlierOnThePathIsNotCached) {
    test::TempDir dir;
    const fs::path earlier = dir.path() / "a" / "cfg.h", later = dir.path() / "b" / "cfg.h";
    fs::create_directories(dir.path() / "a");
    fs::create_directories(dir.path() / "b");
    test::write_file(later, "#define MAGIC 1111\n");
    let_the_clock_pass();
    DiskProgramCache cache((dir.path() / "cache").string());
    expect_change_not_cached(cache, options_with(dir, {dir.path() / "a", dir.path() / "b"}), later,
                             [&] { test::write_file(earlier, "#define MAGIC 2222\n"); }, earlier, 1111,
                             2222);
}

// The memory and disk tiers together: nothing reaches either.
TEST(CompileView, NoTierKeepsCodeOfAChangedHeader) {
    test::TempDir dir;
    const fs::path header = dir.path() / "include" / "cfg.h";
    fs::create_directories(header.parent_path());
    test::write_file(header, "#define MAGIC 3333\n");
    let_the_clock_pass();
    auto memory = std::make_shared<MemoryProgramCache>();
    auto disk = std::make_shared<DiskProgramCache>((dir.path() / "cache").string());
    TieredProgramCache tiers({memory, disk});
    expect_change_not_cached(tiers, options_with(dir, {dir.path() / "include"}), header,
                             [&] { test::write_file(header, "#define MAGIC 4444\n"); }, header, 3333, 4444);
}

// A header that held still is cached as before: the second compile is a hit.
TEST(CompileView, HeadersThatHeldStillAreCached) {
    test::TempDir dir;
    const fs::path header = dir.path() / "include" / "cfg.h";
    fs::create_directories(header.parent_path());
    test::write_file(header, "#define MAGIC 5555\n");
    let_the_clock_pass();
    MemoryProgramCache cache;
    test::WarningLog log;
    Program program(kernel_source, SourceType::cxx, options_with(dir, {dir.path() / "include"}));
    const ObjectCode first = compile_cached(program, CodeType::ptx, {}, {.cache = &cache});
    EXPECT_TRUE(log.seen.empty()) << log.seen.front().message;
    const auto stored = cache.stats().insertions;
    EXPECT_GT(stored, 0u);
    Program again(kernel_source, SourceType::cxx, options_with(dir, {dir.path() / "include"}));
    EXPECT_EQ(compile_cached(again, CodeType::ptx, {}, {.cache = &cache}).code(), first.code());
    EXPECT_EQ(cache.stats().insertions, stored);
    EXPECT_TRUE(holds(first, 5555));
}

}  // namespace
