// The disk program cache: persistence, integrity, crash safety, several processes, eviction,
// the permission check and the default location.
#include "test_support.hpp"

#include "cudacore/cached_compile.hpp"
#include "cudacore/disk_program_cache.hpp"
#include "cudacore/errors.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <future>
#include <optional>
#include <random>
#include <set>
#include <thread>

extern char** environ;

namespace {

using namespace cudacore;
using cudacore::test::ScopedEnv;
using cudacore::test::TempDir;
using cudacore::test::spawn;
using cudacore::test::wait_for;
namespace fs = std::filesystem;

CacheKey key_of(int n) { return CacheKey::of_bytes("disk key " + std::to_string(n)); }

ObjectCode sample(std::size_t size = 64, char fill = 'c') {
    return ObjectCode::from_cubin(std::string(size, fill), "sample", {{"k<int>", "_Z1kIiEvv"}});
}

// Keys whose entries fall in different shard folders (n = 0, 1, 2... skipping any whose shard is
// taken), so that tests of eviction order do not depend on how keys share shards.
std::vector<CacheKey> keys_in_distinct_shards(std::size_t count) {
    std::vector<CacheKey> keys;
    std::set<std::uint8_t> shards;
    for (int n = 0; keys.size() < count; ++n) {
        if (shards.insert(key_of(n).digest[0]).second) keys.push_back(key_of(n));
    }
    return keys;
}

// Where `key`'s entry belongs, its shard folder created (shard folders come with their first
// entry), for planting a file there.
fs::path planted(const DiskProgramCache& cache, const CacheKey& key) {
    const fs::path path = cache.entry_path(key);
    fs::create_directory(path.parent_path());
    fs::permissions(path.parent_path(), fs::perms::owner_all, fs::perm_options::replace);
    return path;
}

// Counted in the shard folders too.
std::size_t count_files(const fs::path& dir, std::string_view suffix) {
    std::size_t n = 0;
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
        if (entry.path().filename().string().ends_with(suffix)) ++n;
    }
    return n;
}

std::size_t count_temporaries(const fs::path& dir) {
    std::size_t n = 0;
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
        if (entry.path().filename().string().find(".tmp-") != std::string::npos) ++n;
    }
    return n;
}

void set_mtime(const fs::path& path, std::time_t seconds_ago) {
    timespec times[2];
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    times[0] = times[1] = {now.tv_sec - seconds_ago, 0};
    ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
}

mode_t mode_of(const fs::path& path) {
    struct stat info {};
    EXPECT_EQ(stat(path.c_str(), &info), 0);
    return info.st_mode & 07777;
}

TEST(DiskProgramCache, HitReturnsIdenticalBytesAcrossInstances) {
    TempDir dir;
    const ObjectCode code = sample();
    {
        DiskProgramCache cache(dir.path() / "cache");
        EXPECT_FALSE(cache.get(key_of(1)));
        cache.put(key_of(1), code);
    }
    DiskProgramCache reopened(dir.path() / "cache");
    auto hit = reopened.get(key_of(1));
    ASSERT_TRUE(hit);
    EXPECT_EQ(*hit, code);
    EXPECT_EQ(hit->code(), code.code());
    EXPECT_FALSE(reopened.get(key_of(2)));
    const CacheStats stats = reopened.stats();
    EXPECT_EQ(stats.hits, 1u);
    EXPECT_EQ(stats.misses, 1u);
    EXPECT_EQ(stats.entries, 1u);
    EXPECT_EQ(stats.bytes, fs::file_size(reopened.entry_path(key_of(1))));
}

TEST(DiskProgramCache, DirectoryIsPrivateAndEntriesAreOwnerOnly) {
    TempDir dir;
    DiskProgramCache cache(dir.path() / "a" / "b" / "cache");
    EXPECT_EQ(mode_of(cache.directory()), 0700u);
    cache.put(key_of(1), sample());
    EXPECT_EQ(mode_of(cache.entry_path(key_of(1))), 0600u);
    EXPECT_EQ(count_temporaries(cache.directory()), 0u);
}

TEST(DiskProgramCache, EveryCorruptedByteMakesAMissAndRemovesTheEntry) {
    TempDir dir;
    DiskProgramCache cache(dir.path() / "cache");
    const ObjectCode code = ObjectCode::from_cubin("tiny", "t");
    cache.put(key_of(1), code);
    const std::string good = test::read_file(cache.entry_path(key_of(1)));
    for (std::size_t position = 0; position < good.size(); ++position) {
        std::string bad = good;
        bad[position] ^= 0x20;
        test::write_file(cache.entry_path(key_of(1)), bad);
        EXPECT_FALSE(cache.get(key_of(1))) << "byte " << position;
        EXPECT_FALSE(fs::exists(cache.entry_path(key_of(1)))) << "byte " << position;
    }
    EXPECT_EQ(cache.stats().corrupt_entries, good.size());
    cache.put(key_of(1), code);  // and the cache works again afterwards
    EXPECT_EQ(cache.get(key_of(1)), code);
}

TEST(DiskProgramCache, TruncatedEmptyMisplacedOrSymlinkedEntriesAreMisses) {
    TempDir dir;
    DiskProgramCache cache(dir.path() / "cache");
    cache.put(key_of(1), sample());
    const std::string good = test::read_file(cache.entry_path(key_of(1)));
    for (std::size_t length : {std::size_t{0}, std::size_t{10}, good.size() / 2, good.size() - 1}) {
        test::write_file(planted(cache, key_of(2)), good.substr(0, length));
        EXPECT_FALSE(cache.get(key_of(2))) << "length " << length;
        EXPECT_FALSE(fs::exists(cache.entry_path(key_of(2))));
    }
    // A valid entry of key 1 copied under key 2's name is not key 2's code.
    test::write_file(cache.entry_path(key_of(2)), good);
    EXPECT_FALSE(cache.get(key_of(2)));
    // A symlink in place of an entry is never followed.
    fs::create_symlink(cache.entry_path(key_of(1)), planted(cache, key_of(3)));
    EXPECT_FALSE(cache.get(key_of(3)));
    EXPECT_TRUE(cache.get(key_of(1)));
}

TEST(DiskProgramCache, EvictionKeepsTheCacheUnderItsBoundLeastRecentlyUsedFirst) {
    TempDir dir;
    const std::uint64_t entry_size = DiskProgramCache::encode_entry(key_of(0), sample(1000)).size();
    DiskProgramCache cache(dir.path() / "cache", 3 * entry_size);
    const auto keys = keys_in_distinct_shards(4);
    auto key_of = [&](int n) { return n < 4 ? keys[n] : ::key_of(n); };
    for (int i = 0; i < 3; ++i) {
        cache.put(key_of(i), sample(1000));
        set_mtime(cache.entry_path(key_of(i)), 100 - i * 10);  // 0 oldest, 2 newest
    }
    // The file system stamps a hit with its coarse clock (a few ms), while a shard's record of a
    // put comes from clock_gettime: LRU order holds between uses further apart than a tick.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_TRUE(cache.get(key_of(0)));  // a hit makes 0 the most recently used
    cache.put(key_of(3), sample(1000));
    EXPECT_TRUE(fs::exists(cache.entry_path(key_of(0))));
    EXPECT_FALSE(fs::exists(cache.entry_path(key_of(1))));
    EXPECT_TRUE(fs::exists(cache.entry_path(key_of(2))));
    EXPECT_TRUE(fs::exists(cache.entry_path(key_of(3))));
    for (int i = 4; i < 30; ++i) {
        cache.put(key_of(i), sample(100 + (i * 337) % 1500));
        EXPECT_LE(cache.stats().bytes, 3 * entry_size);
    }
    EXPECT_GT(cache.stats().evictions, 0u);
    // An entry larger than the whole cache is not stored.
    cache.put(key_of(99), sample(4 * entry_size));
    EXPECT_FALSE(cache.get(key_of(99)));
}

TEST(DiskProgramCache, PruneAndClear) {
    TempDir dir;
    DiskProgramCache cache(dir.path() / "cache");
    for (int i = 0; i < 5; ++i) cache.put(key_of(i), sample(500));
    const std::uint64_t total = cache.stats().bytes;
    EXPECT_EQ(cache.prune(total), 0u);
    EXPECT_EQ(cache.prune(total / 2), 3u);
    EXPECT_LE(cache.stats().bytes, total / 2);
    // A temporary left by a killed writer goes once it is stale, not before.
    // (Named as the cache's own writes name them: only those are ever removed.)
    const fs::path fresh = cache.directory() / ("." + key_of(20).hex() + ".ccentry.tmp-1-2-3");
    const fs::path stale = cache.directory() / ("." + key_of(21).hex() + ".ccentry.tmp-4-5-6");
    test::write_file(fresh, "partial");
    test::write_file(stale, "partial");
    set_mtime(stale, DiskProgramCache::stale_temporary_age.count() + 60);
    EXPECT_EQ(cache.stats().entries, 2u);  // temporaries are not entries
    cache.clear();
    EXPECT_EQ(cache.stats().entries, 0u);
    EXPECT_TRUE(fs::exists(fresh));
    EXPECT_FALSE(fs::exists(stale));
}

TEST(DiskProgramCache, RefusesADirectoryWritableByOthers) {
    TempDir dir;
    const fs::path open_dir = dir.path() / "shared";
    fs::create_directory(open_dir);
    for (mode_t mode : {0777, 0770, 0702}) {
        ASSERT_EQ(chmod(open_dir.c_str(), mode), 0);
        try {
            DiskProgramCache cache(open_dir);
            FAIL() << "mode " << std::oct << mode << " was accepted";
        } catch (const CacheError& e) {
            const std::string message = e.what();
            EXPECT_NE(message.find(open_dir.string()), std::string::npos) << message;
            EXPECT_NE(message.find("other users"), std::string::npos) << message;
        }
    }
    ASSERT_EQ(chmod(open_dir.c_str(), 0755), 0);  // readable by others is not a risk
    EXPECT_NO_THROW(DiskProgramCache{open_dir});
    const fs::path file = dir.path() / "file";
    test::write_file(file, "x");
    EXPECT_THROW(DiskProgramCache{file}, CacheError);
}

TEST(DiskProgramCache, RefusesADirectoryOwnedBySomeoneElse) {
    TempDir dir;
    fs::path foreign;
    if (geteuid() == 0) {
        foreign = dir.path() / "foreign";
        fs::create_directory(foreign);
        ASSERT_EQ(chmod(foreign.c_str(), 0700), 0);
        ASSERT_EQ(chown(foreign.c_str(), 65534, 65534), 0);  // nobody
    } else {
        foreign = "/";  // owned by root, and not writable by others
    }
    try {
        DiskProgramCache cache(foreign);
        FAIL() << foreign << " was accepted";
    } catch (const CacheError& e) {
        EXPECT_NE(std::string(e.what()).find("owned by uid"), std::string::npos) << e.what();
    }
}

TEST(DiskProgramCache, WriterKilledMidWriteLeavesNoBadEntry) {
    TempDir dir;
    const fs::path cache_dir = dir.path() / "cache";
    DiskProgramCache cache(cache_dir);
    const CacheKey key = key_of(42);
    std::mt19937 random(12345);
    std::size_t returned = 0, killed_mid_write = 0, temporaries_before = 0;
    constexpr int rounds = 10;
    for (int round = 0; round < rounds; ++round) {
        // 8 MiB entries, rewritten until killed.
        const pid_t pid = spawn({test::helper_path("cache_writer").string(), "put",
                                 cache_dir.string(), key.hex(), std::to_string(8 << 20), "0",
                                 "round" + std::to_string(round)});
        if (round % 2 == 0) {
            // Kill while a temporary file exists (in write or fsync), a little after it appears.
            const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
            while (count_temporaries(cache_dir) == temporaries_before &&
                   std::chrono::steady_clock::now() < give_up) {
                std::this_thread::sleep_for(std::chrono::microseconds(100));
            }
            std::this_thread::sleep_for(std::chrono::microseconds(random() % 2000));
        } else {
            // Kill at a random instant: start-up, building the entry, write, fsync or rename.
            std::this_thread::sleep_for(std::chrono::milliseconds(5 + random() % 150));
        }
        kill(pid, SIGKILL);
        EXPECT_EQ(wait_for(pid), -SIGKILL);
        const std::size_t temporaries = count_temporaries(cache_dir);
        if (temporaries > temporaries_before) ++killed_mid_write;
        temporaries_before = temporaries;
        if (auto code = cache.get(key)) {
            ++returned;
            EXPECT_EQ(code->size(), std::size_t{8} << 20);
            const char letter = code->code()[0];
            EXPECT_EQ(code->code().find_first_not_of(letter), std::string_view::npos);
        }
    }
    // Whatever was under the entry's name was complete: nothing failed its check.
    EXPECT_EQ(cache.stats().corrupt_entries, 0u);
    EXPECT_LE(count_files(cache_dir, ".ccentry"), 1u);
    // The kills did land inside writes (their temporary files remain, never read as entries).
    EXPECT_GT(killed_mid_write, 0u);
    std::cout << rounds << " kills: " << killed_mid_write << " mid-write; " << returned
              << " found a complete entry from an earlier write\n";
}

TEST(DiskProgramCache, ProcessesRacingOnOneKeyEndWithOneValidEntry) {
    TempDir dir;
    const fs::path cache_dir = dir.path() / "cache";
    DiskProgramCache cache(cache_dir);
    const CacheKey key = key_of(7);
    std::vector<pid_t> writers, readers;
    for (int w = 0; w < 4; ++w) {
        writers.push_back(spawn({test::helper_path("cache_writer").string(), "put",
                                 cache_dir.string(), key.hex(), "65536", "25",
                                 "writer" + std::to_string(w)}));
    }
    for (int r = 0; r < 2; ++r) {
        readers.push_back(spawn({test::helper_path("cache_writer").string(), "get",
                                 cache_dir.string(), key.hex(), "500"}));
    }
    for (pid_t pid : writers) EXPECT_EQ(wait_for(pid), 0);
    for (pid_t pid : readers) EXPECT_EQ(wait_for(pid), 0) << "a reader saw a bad entry";
    EXPECT_EQ(count_files(cache_dir, ".ccentry"), 1u);
    EXPECT_EQ(count_temporaries(cache_dir), 0u);
    auto code = cache.get(key);
    ASSERT_TRUE(code);
    EXPECT_EQ(code->size(), 65536u);
    EXPECT_TRUE(code->name().starts_with("writer")) << code->name();
    EXPECT_EQ(cache.stats().corrupt_entries, 0u);
}

TEST(DiskProgramCache, DefaultLocationFollowsTheEnvironment) {
    ScopedEnv home("HOME", "/home/someone");
    {
        ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
        ScopedEnv own("CUDACORE_CACHE_DIR", nullptr);
        EXPECT_EQ(default_cache_directory(), fs::path("/home/someone/.cache/cudacore"));
    }
    {
        ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
        ScopedEnv own("CUDACORE_CACHE_DIR", nullptr);
        EXPECT_EQ(default_cache_directory(), fs::path("/xdg/cudacore"));
        ScopedEnv relative("XDG_CACHE_HOME", "relative");  // ignored, as XDG says
        EXPECT_EQ(default_cache_directory(), fs::path("/home/someone/.cache/cudacore"));
    }
    {
        ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
        ScopedEnv own("CUDACORE_CACHE_DIR", "/mine");
        EXPECT_EQ(default_cache_directory(), fs::path("/mine"));
    }
}

TEST(DiskProgramCache, EnvironmentCanTurnCachingOff) {
    TempDir dir;
    ScopedEnv own("CUDACORE_CACHE_DIR", (dir.path() / "default").c_str());
    {
        ScopedEnv off("CUDACORE_DISABLE_CACHE", "1");
        EXPECT_TRUE(cache_disabled_by_environment());
        EXPECT_EQ(open_default_program_cache(), nullptr);
    }
    {
        ScopedEnv on("CUDACORE_DISABLE_CACHE", "0");
        EXPECT_FALSE(cache_disabled_by_environment());
        auto cache = open_default_program_cache();
        ASSERT_NE(cache, nullptr);
        EXPECT_TRUE(fs::is_directory(dir.path() / "default"));
    }
}

TEST(DiskProgramCache, RelativeCacheDirIsRefusedLikeRelativeHomeAndXdg) {
    ScopedEnv home("HOME", "/home/someone");
    ScopedEnv own("CUDACORE_CACHE_DIR", "relative/cache");
    try {
        default_cache_directory();
        FAIL() << "a relative CUDACORE_CACHE_DIR was accepted";
    } catch (const CacheError& e) {
        EXPECT_NE(std::string(e.what()).find("relative/cache"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("absolute"), std::string::npos) << e.what();
    }
    EXPECT_THROW(open_default_program_cache(), CacheError);
}

// The directory is checked once, on the descriptor it is used through: a symlink swapped in
// after the check (pointing at a directory holding planted code) redirects nothing.
TEST(DiskProgramCache, SymlinkSwappedInAfterTheCheckRedirectsNothing) {
    TempDir dir;
    const fs::path path = dir.path() / "cache";
    const fs::path planted_dir = dir.path() / "planted";
    const ObjectCode evil = ObjectCode::from_cubin("// attacker code", "evil");
    DiskProgramCache(planted_dir).put(key_of(1), evil);  // the code the swap would redirect to

    DiskProgramCache cache(path);
    cache.put(key_of(2), sample());
    fs::rename(path, dir.path() / "cache.real");
    fs::create_directory_symlink(planted_dir, path);

    EXPECT_FALSE(cache.get(key_of(1))) << "read through the swapped-in symlink";
    EXPECT_EQ(cache.get(key_of(2)), sample());  // still the directory that was checked
    cache.put(key_of(3), sample(10));
    auto in_cache = [&](int n) { return cache.entry_path(key_of(n)).lexically_relative(path); };
    EXPECT_TRUE(fs::exists(dir.path() / "cache.real" / in_cache(3)));
    EXPECT_FALSE(fs::exists(planted_dir / in_cache(3)));
    EXPECT_EQ(cache.stats().entries, 2u);
    cache.clear();
    EXPECT_TRUE(fs::exists(planted_dir / in_cache(1)));
    // Opened afresh, the symlink itself is refused.
    try {
        DiskProgramCache reopened(path);
        FAIL() << "a symlinked cache directory was accepted";
    } catch (const CacheError& e) {
        EXPECT_NE(std::string(e.what()).find("symbolic link"), std::string::npos) << e.what();
    }
}

// Runs `read` on another thread; if it has not returned within a few seconds (blocked opening a
// FIFO), a writer is attached to unblock it and the test fails instead of hanging.
template <typename Read>
bool returns_without_blocking_on(const fs::path& fifo, Read read) {
    auto result = std::async(std::launch::async, read);
    if (result.wait_for(std::chrono::seconds(5)) == std::future_status::ready) {
        result.get();
        return true;
    }
    const int unblock = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    result.wait();
    if (unblock >= 0) ::close(unblock);
    return false;
}

TEST(DiskProgramCache, FifoWhereAnEntryBelongsIsAMissNotAHang) {
    TempDir dir;
    DiskProgramCache cache(dir.path() / "cache");
    const fs::path entry = planted(cache, key_of(1));
    ASSERT_EQ(mkfifo(entry.c_str(), 0600), 0);
    std::optional<ObjectCode> got = sample();
    EXPECT_TRUE(returns_without_blocking_on(entry, [&] { got = cache.get(key_of(1)); }))
        << "get() blocked on a FIFO";
    EXPECT_FALSE(got);
    EXPECT_EQ(cache.stats().corrupt_entries, 1u);
    EXPECT_FALSE(fs::exists(fs::symlink_status(entry)));  // removed, like any bad entry
    cache.put(key_of(1), sample());
    EXPECT_EQ(cache.get(key_of(1)), sample());
}

// A store that fails (no space: here a file-size limit, which fails writes with EFBIG as a full
// disk fails them with ENOSPC; a directory where the entry belongs; a read-only directory) is
// counted and reported; get_or_compile still returns the compiled code, and nothing is left behind.
class FailedStore : public ::testing::Test {
protected:
    TempDir dir;
    DiskProgramCache cache{dir.path() / "cache"};
    std::vector<std::string> warnings;
    int compiles = 0;

    ObjectCode compile_through_cache(const CacheKey& key) {
        return get_or_compile(
            cache, key, [&] { ++compiles; return sample(4096); },
            [&](const CacheError& e) { warnings.push_back(e.what()); });
    }

    void expect_reported_once(const CacheKey& key, const std::string& reason) {
        EXPECT_EQ(cache.stats().failed_stores, 1u);
        ASSERT_EQ(warnings.size(), 1u);
        EXPECT_NE(warnings[0].find(key.hex()), std::string::npos) << warnings[0];
        EXPECT_NE(warnings[0].find(reason), std::string::npos) << warnings[0];
        EXPECT_EQ(count_temporaries(cache.directory()), 0u);
        EXPECT_EQ(cache.stats().insertions, 0u);
    }
};

TEST_F(FailedStore, FullDiskStillReturnsTheCode) {
    struct rlimit old_limit {};
    ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old_limit), 0);
    const auto old_handler = signal(SIGXFSZ, SIG_IGN);
    const struct rlimit small{1024, old_limit.rlim_max};
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
    ObjectCode code = [&] {
        try {
            return compile_through_cache(key_of(1));
        } catch (...) {
            setrlimit(RLIMIT_FSIZE, &old_limit);
            throw;
        }
    }();
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &old_limit), 0);
    signal(SIGXFSZ, old_handler);
    EXPECT_EQ(code, sample(4096));
    EXPECT_EQ(compiles, 1);
    expect_reported_once(key_of(1), "File too large");
    EXPECT_FALSE(fs::exists(cache.entry_path(key_of(1))));
}

TEST_F(FailedStore, DirectoryWhereTheEntryBelongsStillReturnsTheCode) {
    fs::create_directory(planted(cache, key_of(1)));
    EXPECT_EQ(compile_through_cache(key_of(1)), sample(4096));
    expect_reported_once(key_of(1), "Is a directory");
    EXPECT_TRUE(fs::is_directory(cache.entry_path(key_of(1))));  // the user's directory stays
    // Every later call compiles again (and warns again): nothing wrong was ever stored.
    EXPECT_EQ(compile_through_cache(key_of(1)), sample(4096));
    EXPECT_EQ(compiles, 2);
}

TEST_F(FailedStore, ReadOnlyDirectoryStillReturnsTheCode) {
    if (geteuid() == 0) GTEST_SKIP() << "running as root, which writes to a mode 0500 directory";
    const fs::path folder = planted(cache, key_of(1)).parent_path();  // the entry's shard
    ASSERT_EQ(chmod(folder.c_str(), 0500), 0);
    const ObjectCode code = compile_through_cache(key_of(1));
    chmod(folder.c_str(), 0700);
    EXPECT_EQ(code, sample(4096));
    expect_reported_once(key_of(1), "Permission denied");
}

// Temporary files left in a shard by a writer that is gone are reclaimed when that shard is next
// cleaned; those of a live writer are kept until stale. (An entry being written is not counted
// against the bound until it is in place.)
TEST(DiskProgramCache, TemporariesAreReclaimedWhenTheirWriterIsGone) {
    TempDir dir;
    const std::uint64_t entry_size = DiskProgramCache::encode_entry(key_of(0), sample(1000)).size();
    DiskProgramCache cache(dir.path() / "cache", 2 * entry_size);
    const auto keys = keys_in_distinct_shards(3);
    const pid_t gone = spawn({"/bin/true"});
    ASSERT_EQ(wait_for(gone), 0);  // reaped: its pid names no process now
    const fs::path shard = planted(cache, keys[0]).parent_path();
    const std::string temporary = "." + keys[0].hex() + ".ccentry.tmp-";
    const fs::path dead = shard / (temporary + std::to_string(gone) + "-0-1");
    const fs::path live = shard / (temporary + std::to_string(getpid()) + "-0-2");
    test::write_file(dead, std::string(entry_size, 'd'));
    test::write_file(live, std::string(entry_size, 'l'));
    for (const auto& key : keys) cache.put(key, sample(1000));
    // The third put went over the bound: the shard of the least recently used entry was
    // cleaned, its entry evicted and the dead writer's file with it.
    EXPECT_FALSE(fs::exists(cache.entry_path(keys[0])));
    EXPECT_TRUE(fs::exists(cache.entry_path(keys[1])));
    EXPECT_TRUE(fs::exists(cache.entry_path(keys[2])));
    EXPECT_FALSE(fs::exists(dead));
    EXPECT_TRUE(fs::exists(live));
    EXPECT_EQ(cache.stats().entries, 2u);
    EXPECT_EQ(cache.stats().bytes, 2 * entry_size);

    // A writer really killed in the middle of a write: its temporary file goes on the next prune.
    const fs::path cache_dir = cache.directory();
    const std::size_t before = count_temporaries(cache_dir);
    const pid_t writer = spawn({test::helper_path("cache_writer").string(), "put",
                                cache_dir.string(), key_of(9).hex(), std::to_string(8 << 20), "0",
                                "killed"});
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (count_temporaries(cache_dir) == before && std::chrono::steady_clock::now() < give_up)
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    kill(writer, SIGKILL);
    EXPECT_EQ(wait_for(writer), -SIGKILL);
    EXPECT_EQ(count_temporaries(cache_dir), before + 1) << "the kill did not land in a write";
    cache.prune(std::uint64_t{1} << 40);
    EXPECT_EQ(count_temporaries(cache_dir), 1u);  // only the live writer's
    EXPECT_TRUE(fs::exists(live));
}

// A writer holds a lock on its temporary file while it writes: one in another pid namespace
// (whose pid names no process here) or stalled past stale_temporary_age is never taken for gone.
TEST(DiskProgramCache, ATemporaryWhoseWriterHoldsItsLockIsKept) {
    TempDir dir;
    DiskProgramCache cache(dir.path() / "cache");
    const pid_t gone = spawn({"/bin/true"});
    ASSERT_EQ(wait_for(gone), 0);
    const fs::path shard = planted(cache, key_of(0)).parent_path();
    const fs::path writing =
        shard / ("." + key_of(0).hex() + ".ccentry.tmp-" + std::to_string(gone) + "-0-1");
    test::write_file(writing, "partial");
    const int lock = ::open(writing.c_str(), O_WRONLY | O_CLOEXEC);
    ASSERT_GE(lock, 0);
    ASSERT_EQ(::flock(lock, LOCK_EX), 0);
    cache.prune(std::uint64_t{1} << 40);
    EXPECT_TRUE(fs::exists(writing)) << "removed while its writer held it";
    set_mtime(writing, 3600);
    cache.prune(std::uint64_t{1} << 40);
    EXPECT_TRUE(fs::exists(writing)) << "removed while its writer held it, once stale";
    ::close(lock);
    cache.prune(std::uint64_t{1} << 40);
    EXPECT_FALSE(fs::exists(writing)) << "left after its writer was gone";
}

}  // namespace

namespace {

// ASan and TSan reserve terabytes of address space for their shadow memory: RLIMIT_AS cannot
// bound them (TSan dies of its own allocation failing rather than throwing std::bad_alloc).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool under_sanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool under_sanitizer = true;
#else
constexpr bool under_sanitizer = false;
#endif
#else
constexpr bool under_sanitizer = false;
#endif

// A file of `size` bytes that takes no disk space (a hole).
void make_sparse(const fs::path& path, std::uint64_t size) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(size)), 0);
    ::close(fd);
}

// Runs `get` in a child process whose memory is bounded to 512 MiB, so that reading a file of
// gigabytes would end in std::bad_alloc (an abort) instead of a miss.
void expect_miss_under_memory_limit(DiskProgramCache& cache, const CacheKey& key) {
    auto child = [&] {
        const rlimit limit{512u << 20, 512u << 20};
        if (::setrlimit(RLIMIT_AS, &limit) != 0) std::_Exit(4);
        const std::uint64_t misses = cache.stats().misses;
        const bool hit = cache.get(key).has_value();
        std::_Exit(hit ? 2 : cache.stats().misses == misses + 1 ? 0 : 3);
    };
    EXPECT_EXIT(child(), ::testing::ExitedWithCode(0), "");
}

// Item: reads are bounded. Nothing larger than the cache writes is read, whatever its size.
TEST(DiskProgramCache, AnEntryLargerThanTheCacheWritesIsAMissRefusedBeforeReading) {
    if (under_sanitizer)
        GTEST_SKIP() << "RLIMIT_AS cannot bound a sanitized (ASan, TSan) process";
    TempDir dir;
    DiskProgramCache cache(dir.path() / "cache");  // writes entries of at most 1 GiB
    // 3 GiB: within the format's limit, above this cache's bound: a miss, left in place.
    make_sparse(planted(cache, key_of(1)), std::uint64_t{3} << 30);
    expect_miss_under_memory_limit(cache, key_of(1));
    EXPECT_TRUE(fs::exists(cache.entry_path(key_of(1))));
    // Above what any cache writes: a miss, removed as corrupt.
    make_sparse(planted(cache, key_of(2)), std::uint64_t{5} << 30);
    EXPECT_FALSE(cache.get(key_of(2)));
    EXPECT_EQ(cache.stats().corrupt_entries, 1u);
    EXPECT_FALSE(fs::exists(cache.entry_path(key_of(2))));
    // Within the bound but too large for the memory there is: a miss, not std::bad_alloc.
    make_sparse(planted(cache, key_of(3)), std::uint64_t{800} << 20);
    expect_miss_under_memory_limit(cache, key_of(3));
}

TEST(DiskProgramCache, AnEntryOfACacheWithALargerBoundIsAMissHereAndAHitThere) {
    TempDir dir;
    DiskProgramCache large(dir.path() / "cache");
    DiskProgramCache small(dir.path() / "cache", 64 << 10);
    large.put(key_of(1), sample(100 << 10));
    EXPECT_FALSE(small.get(key_of(1)));
    EXPECT_EQ(small.stats().corrupt_entries, 0u);
    EXPECT_EQ(large.get(key_of(1)), sample(100 << 10));
}

// Item: cache maintenance deletes only what the cache wrote.
TEST(DiskProgramCache, ClearRemovesOnlyNamesOfTheCachesOwnForms) {
    TempDir dir;
    DiskProgramCache cache(dir.path() / "cache");
    for (int i = 0; i < 3; ++i) cache.put(key_of(i), sample());
    const std::vector<std::string> foreign{
        ".notes.tmp-1", ".report.tmp-old", "notes.txt", ".x.ccentry.tmp-1-2-3",
        std::string(64, 'A') + ".ccentry", "." + key_of(9).hex() + ".ccentry.tmp-1-2-x"};
    for (const auto& name : foreign) test::write_file(cache.directory() / name, "mine");
    set_mtime(cache.directory() / ".notes.tmp-1", 100000);  // old "temporaries" too
    set_mtime(cache.directory() / ".report.tmp-old", 100000);
    cache.clear();
    EXPECT_EQ(count_files(cache.directory(), ".ccentry"), 1u);  // the upper-case one, not ours
    for (const auto& name : foreign)
        EXPECT_EQ(test::read_file(cache.directory() / name), "mine") << name;
    EXPECT_TRUE(fs::exists(cache.directory() / "CACHEDIR.TAG"));
}

TEST(DiskProgramCache, AFolderThatIsNotACacheIsRefusedAndLeftUntouched) {
    TempDir dir;
    const fs::path folder = dir.path() / "documents";
    fs::create_directories(folder);
    fs::permissions(folder, fs::perms::owner_all, fs::perm_options::replace);
    test::write_file(folder / ".notes.tmp-1", "mine");
    auto expect_refused = [&](const std::function<void()>& open, const char* why) {
        try {
            open();
            ADD_FAILURE() << "not refused";
        } catch (const CacheError& e) {
            EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
        }
        std::vector<std::string> names;
        for (const auto& entry : fs::directory_iterator(folder))
            names.push_back(entry.path().filename().string());
        EXPECT_EQ(names, std::vector<std::string>{".notes.tmp-1"});  // no .lock, no marker
    };
    expect_refused([&] { DiskProgramCache cache(folder); }, "not a cudacore cache");
    expect_refused([&] { DiskProgramCache::open_existing(folder)->clear(); }, "not a cudacore cache");
    // Maintenance never marks a folder, even an empty one.
    fs::remove(folder / ".notes.tmp-1");
    try {
        DiskProgramCache::open_existing(folder);
        ADD_FAILURE() << "an empty, unmarked folder was taken for a cache";
    } catch (const CacheError&) {
    }
    EXPECT_TRUE(fs::is_empty(folder));
    // Another program's CACHEDIR.TAG does not make it cudacore's.
    test::write_file(folder / "CACHEDIR.TAG", "Signature: 8a477f597d28d172789f06886806bc55\n");
    EXPECT_THROW(DiskProgramCache cache(folder), CacheError);
    // The root directory never is a cache.
    EXPECT_THROW(DiskProgramCache::open_existing("/"), CacheError);
}

// A cache another process is making (its folder made, its marker still being written) is waited
// for by maintenance (`cudacore cache export|stats|clear`), not refused as "not a cudacore cache".
TEST(DiskProgramCache, OpeningACacheBeingCreatedWaitsForItsMarker) {
    TempDir dir;
    const fs::path folder = dir.path() / "cache";
    fs::create_directory(folder);
    fs::permissions(folder, fs::perms::owner_all, fs::perm_options::replace);
    // The marker's temporary, as write_file_atomically_at names it, before its rename.
    test::write_file(folder / ".CACHEDIR.TAG.tmp-1-1-1", "");
    std::thread creator([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        fs::remove(folder / ".CACHEDIR.TAG.tmp-1-1-1");
        DiskProgramCache cache(folder);
    });
    std::unique_ptr<DiskProgramCache> opened;
    EXPECT_NO_THROW(opened = DiskProgramCache::open_existing(folder));
    creator.join();
    ASSERT_NE(opened, nullptr);
    EXPECT_EQ(opened->stats().entries, 0u);
}

// The same with real processes: each of many caches is opened for maintenance while another
// process creates it; every open finds no cache yet or the cache, never a refusal.
TEST(DiskProgramCache, MaintenanceRacingTheCreationOfACacheNeverRefusesIt) {
    TempDir dir;
    int refused = 0;
    std::string first;
    for (int round = 0; round < 40; ++round) {
        const fs::path folder = dir.path() / ("cache" + std::to_string(round));
        const pid_t child = ::fork();
        ASSERT_GE(child, 0);
        if (child == 0) {
            try {
                DiskProgramCache cache(folder);
            } catch (...) {
                ::_exit(1);
            }
            ::_exit(0);
        }
        bool opened = false;
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (!opened && std::chrono::steady_clock::now() < give_up) {
            try {
                opened = DiskProgramCache::open_existing(folder) != nullptr;
            } catch (const CacheError& e) {
                if (++refused == 1) first = e.what();
                break;
            }
        }
        int status = 0;
        ASSERT_EQ(::waitpid(child, &status, 0), child);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        EXPECT_TRUE(opened || refused > 0) << "round " << round << ": never opened";
    }
    EXPECT_EQ(refused, 0) << first;
}

TEST(DiskProgramCache, AFolderHoldingOnlyCacheEntriesIsMarkedAsACache) {
    TempDir dir;
    const fs::path folder = dir.path() / "cache";
    {
        DiskProgramCache cache(folder);
        cache.put(key_of(1), sample());
    }
    fs::remove(folder / "CACHEDIR.TAG");  // as a cache made before the marker
    DiskProgramCache cache(folder);
    EXPECT_TRUE(fs::exists(folder / "CACHEDIR.TAG"));
    EXPECT_EQ(cache.get(key_of(1)), sample());
    EXPECT_NE(DiskProgramCache::open_existing(folder), nullptr);
}

}  // namespace
