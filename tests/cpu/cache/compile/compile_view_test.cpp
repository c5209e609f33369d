// A cached compile reads each project header once, and NVRTC compiles those bytes from memory:
// the compile opens no project file, so an edit made the moment after the header was read changes
// nothing in it; its code is that of the bytes read, stored under their key, and the next
// compile through the cache reads the new bytes, misses, and gives their code. No warning, no
// time stamp: the bytes hashed are the bytes compiled. inotify counts the reads.
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
// well beyond the moment cfg.h was read.
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

// Counts the reads of `path` (inotify IN_CLOSE_NOWRITE: a file opened to read, read and closed);
// wait_for_one() lets a change run after the first.
class Opens {
public:
    explicit Opens(const fs::path& path) {
        fd_ = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
        watching_ = fd_ >= 0 && ::inotify_add_watch(fd_, path.c_str(), IN_CLOSE_NOWRITE) >= 0;
        EXPECT_TRUE(watching_) << "inotify cannot watch " << path;
    }
    ~Opens() { ::close(fd_); }

    // True once a read was seen within `limit` (counted).
    bool wait_for_one(std::chrono::milliseconds limit) {
        const auto end = std::chrono::steady_clock::now() + limit;
        while (watching_ && count() == 0) {
            if (std::chrono::steady_clock::now() > end) return false;
            pollfd waiting{fd_, POLLIN, 0};
            ::poll(&waiting, 1, 10);
        }
        return watching_;
    }

    // The reads seen so far.
    int count() {
        alignas(inotify_event) char buffer[4096];
        for (ssize_t got; (got = ::read(fd_, buffer, sizeof buffer)) > 0;) {
            for (ssize_t at = 0; at < got;) {
                const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
                if (event->mask & IN_CLOSE_NOWRITE) ++seen_;
                at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
            }
        }
        return seen_;
    }

private:
    int fd_ = -1;
    bool watching_ = false;
    int seen_ = 0;
};

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

// Compiles through `cache` while `change` runs right after `watched` was first opened; then checks
// that `watched` was opened once (by the snapshot, not by NVRTC), that the code is of the bytes
// read (`old_value`), and that the next compile gives the code of the files as they are now.
void expect_change_unseen_by_the_compile(ProgramCache& cache, const ProgramOptions& options,
                                         const fs::path& watched, const std::function<void()>& change,
                                         int old_value, int now_value) {
    test::WarningLog log;
    Opens opens(watched);
    auto changer = std::async(std::launch::async, [&] {
        const bool opened = opens.wait_for_one(std::chrono::seconds(60));
        change();
        return opened;
    });
    Program program(kernel_source, SourceType::cxx, options);
    const ObjectCode first = compile_cached(program, CodeType::ptx, {}, {.cache = &cache});
    ASSERT_TRUE(changer.get()) << watched << " was never read";
    EXPECT_EQ(opens.count(), 1) << "the compile read " << watched << " again";
    EXPECT_TRUE(holds(first, old_value)) << "the code is not that of the bytes read";
    EXPECT_TRUE(log.seen.empty()) << log.seen.front().message;

    Program again(kernel_source, SourceType::cxx, options);
    const ObjectCode cached = compile_cached(again, CodeType::ptx, {}, {.cache = &cache});
    EXPECT_TRUE(holds(cached, now_value)) << "the cache gave code of files that are gone";
    EXPECT_FALSE(holds(cached, old_value));
    Program plain(kernel_source, SourceType::cxx, options);
    EXPECT_EQ(cached.code(), plain.compile(CodeType::ptx).code());
}

TEST(CompileView, AHeaderEditedAfterItWasReadChangesNothingInTheCompile) {
    test::TempDir dir;
    const fs::path header = dir.path() / "include" / "cfg.h";
    fs::create_directories(header.parent_path());
    test::write_file(header, "#define MAGIC 1111\n");
    MemoryProgramCache cache;
    expect_change_unseen_by_the_compile(cache, options_with(dir, {dir.path() / "include"}), header,
                                        [&] { test::write_file(header, "#define MAGIC 2222\n"); }, 1111, 2222);
}

TEST(CompileView, AHeaderCreatedEarlierOnThePathIsSeenByTheNextCompile) {
    test::TempDir dir;
    const fs::path earlier = dir.path() / "a" / "cfg.h", later = dir.path() / "b" / "cfg.h";
    fs::create_directories(dir.path() / "a");
    fs::create_directories(dir.path() / "b");
    test::write_file(later, "#define MAGIC 1111\n");
    DiskProgramCache cache((dir.path() / "cache").string());
    expect_change_unseen_by_the_compile(cache, options_with(dir, {dir.path() / "a", dir.path() / "b"}), later,
                                        [&] { test::write_file(earlier, "#define MAGIC 2222\n"); }, 1111, 2222);
}

// The memory and disk tiers together.
TEST(CompileView, EveryTierKeepsCodeUnderTheBytesItWasMadeFrom) {
    test::TempDir dir;
    const fs::path header = dir.path() / "include" / "cfg.h";
    fs::create_directories(header.parent_path());
    test::write_file(header, "#define MAGIC 3333\n");
    auto memory = std::make_shared<MemoryProgramCache>();
    auto disk = std::make_shared<DiskProgramCache>((dir.path() / "cache").string());
    TieredProgramCache tiers({memory, disk});
    expect_change_unseen_by_the_compile(tiers, options_with(dir, {dir.path() / "include"}), header,
                                        [&] { test::write_file(header, "#define MAGIC 4444\n"); }, 3333, 4444);
}

// A header that held still is cached as before: the second compile is a hit.
TEST(CompileView, HeadersThatHeldStillAreCached) {
    test::TempDir dir;
    const fs::path header = dir.path() / "include" / "cfg.h";
    fs::create_directories(header.parent_path());
    test::write_file(header, "#define MAGIC 5555\n");
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
