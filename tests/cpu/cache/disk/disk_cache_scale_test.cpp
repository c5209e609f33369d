// The disk cache's sharded layout: entries in 256 folders by key prefix, per-shard counters
// (kept right through puts, replacements, corrupt entries and crashes), eviction one shard at a
// time, and several processes killed at random while they store.
#include "shard_table.hpp"
#include "test_support.hpp"

#include "cudacore/disk_program_cache.hpp"
#include "cudacore/errors.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <thread>

extern char** environ;

namespace {

using namespace cudacore;
using cudacore::test::TempDir;
using cudacore::test::spawn;
using cudacore::test::wait_for;
namespace fs = std::filesystem;

CacheKey key_of(int n) { return CacheKey::of_bytes("scale key " + std::to_string(n)); }

ObjectCode sample(std::size_t size, char fill = 'c') {
    return ObjectCode::from_cubin(std::string(size, fill), "sample");
}

std::string shard_of(const CacheKey& key) { return key.hex().substr(0, 2); }

struct Counted {
    std::uint64_t bytes = 0, entries = 0;
    bool operator==(const Counted&) const = default;
};

// What a listing of one shard folder (or, with shard empty, of every one) finds.
Counted listed(const fs::path& cache, const std::string& shard = "") {
    Counted counted;
    for (const auto& item : fs::recursive_directory_iterator(cache)) {
        const std::string name = item.path().filename().string();
        if (!item.is_regular_file() || !name.ends_with(".ccentry") || name.starts_with("."))
            continue;
        if (!shard.empty() && item.path().parent_path().filename() != shard) continue;
        counted.bytes += item.file_size();
        ++counted.entries;
    }
    return counted;
}

using Slot = test::ShardSlot;
Slot slot(const fs::path& cache, const std::string& shard) { return test::shard_slot(cache, shard); }
void write_slot(const fs::path& cache, const std::string& shard, const std::string& text) {
    test::write_shard_slot(cache, shard, text);
}

// Every slot clean and equal to a listing of its folder.
void expect_counters_match_listings(const fs::path& cache) {
    for (unsigned shard = 0; shard < 256; ++shard) {
        char name[3];
        std::snprintf(name, sizeof name, "%02x", shard);
        const Slot s = slot(cache, name);
        EXPECT_EQ(s.state, 'c') << "shard " << name;
        EXPECT_EQ((Counted{s.bytes, s.entries}), listed(cache, name)) << "shard " << name;
    }
}

void set_mtime(const fs::path& path, std::time_t seconds_ago) {
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    timespec times[2] = {{now.tv_sec - seconds_ago, 0}, {now.tv_sec - seconds_ago, 0}};
    ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
}

TEST(DiskCacheLayout, EntriesLiveInPrivateShardFoldersByKeyPrefix) {
    TempDir dir;
    const fs::path path = dir.path() / "cache";
    DiskProgramCache cache(path);
    EXPECT_EQ(fs::file_size(path / ".shards"), 256u * 64);
    for (int i = 0; i < 50; ++i) cache.put(key_of(100 + i), sample(10));
    std::set<std::string> folders, expected;
    for (int i = 0; i < 50; ++i) expected.insert(shard_of(key_of(100 + i)));
    for (const auto& item : fs::directory_iterator(path)) {
        if (!item.is_directory()) continue;
        folders.insert(item.path().filename().string());
        EXPECT_EQ(fs::status(item).permissions(), fs::perms::owner_all) << item.path();
    }
    EXPECT_EQ(folders, expected);  // a shard folder comes with its first entry
    const CacheKey key = key_of(1);
    cache.put(key, sample(100));
    EXPECT_EQ(cache.entry_path(key), path / shard_of(key) / (key.hex() + ".ccentry"));
    EXPECT_TRUE(fs::is_regular_file(cache.entry_path(key)));
    EXPECT_FALSE(fs::exists(path / DiskProgramCache::entry_name(key)));  // never the top folder
    const Slot s = slot(path, shard_of(key));
    EXPECT_EQ(s.state, 'c');
    EXPECT_EQ(s.entries, 1u);
    EXPECT_EQ(s.bytes, fs::file_size(cache.entry_path(key)));
    EXPECT_GT(s.oldest, 0);
    EXPECT_EQ(cache.get(key), sample(100));
}

TEST(DiskCacheLayout, CountersFollowPutsReplacementsAndCorruptEntries) {
    TempDir dir;
    const fs::path path = dir.path() / "cache";
    DiskProgramCache cache(path);
    for (int i = 0; i < 120; ++i) cache.put(key_of(i), sample(10 + i * 7 % 500));
    for (int i = 0; i < 120; i += 3) cache.put(key_of(i), sample(900));  // replaced, other size
    // Corrupt entries found by get are removed and uncounted (their shard recounted).
    for (int i = 1; i < 120; i += 10) {
        test::write_file(cache.entry_path(key_of(i)), "not an entry");
        EXPECT_FALSE(cache.get(key_of(i)));
    }
    const CacheStats stats = cache.stats();
    const Counted all = listed(path);
    EXPECT_EQ(stats.entries, all.entries);
    EXPECT_EQ(stats.bytes, all.bytes);
    EXPECT_EQ(stats.entries, 120u - 12u);
    expect_counters_match_listings(path);
}

// A put over the bound evicts from one shard (never listing the others), least recently used
// first, and keeps the cache within its bound; entries used recently stay.
TEST(DiskCacheLayout, EvictionWorksOnOneShardAtATimeLeastRecentlyUsedFirst) {
    TempDir dir;
    const fs::path path = dir.path() / "cache";
    const std::uint64_t entry_size = DiskProgramCache::encode_entry(key_of(0), sample(1000)).size();
    constexpr int bound_entries = 250;
    DiskProgramCache cache(path, bound_entries * entry_size);
    // Put in order, so entry i is older than entry i + 1 (a put takes longer than the file
    // system's clock tick); then every other one of the 60 oldest used again.
    for (int i = 0; i < bound_entries; ++i) cache.put(key_of(i), sample(1000));
    EXPECT_EQ(cache.stats().evictions, 0u);
    std::set<int> touched;
    for (int i = 0; i < 60; i += 2) {
        ASSERT_TRUE(cache.get(key_of(i)));
        touched.insert(i);
    }
    for (int i = bound_entries; i < bound_entries + 60; ++i) {
        std::set<std::string> before;
        for (int k = 0; k < i; ++k)
            if (fs::exists(cache.entry_path(key_of(k)))) before.insert(key_of(k).hex());
        cache.put(key_of(i), sample(1000));
        EXPECT_LE(cache.stats().bytes, bound_entries * entry_size) << "after put " << i;
        // Whatever went came from one shard.
        std::set<std::string> shards;
        for (const auto& hex : before)
            if (!fs::exists(path / hex.substr(0, 2) / (hex + ".ccentry")))
                shards.insert(hex.substr(0, 2));
        EXPECT_LE(shards.size(), 1u) << "put " << i << " evicted from several shards";
    }
    EXPECT_GE(cache.stats().evictions, 60u);
    int old_kept = 0;
    for (int i = 0; i < 60; ++i) {
        if (touched.contains(i)) {
            EXPECT_TRUE(fs::exists(cache.entry_path(key_of(i)))) << "recently used " << i;
        } else if (fs::exists(cache.entry_path(key_of(i)))) {
            ++old_kept;
        }
    }
    // Recency is exact across shards and to within a tenth of a shard inside one.
    EXPECT_LE(old_kept, 3) << "of the 30 least recently used entries";
    expect_counters_match_listings(path);
}

TEST(DiskCacheLayout, ACounterLeftDirtyByACrashIsRepairedByTheNextPut) {
    TempDir dir;
    const fs::path path = dir.path() / "cache";
    DiskProgramCache cache(path, std::uint64_t{1} << 30);
    for (int i = 0; i < 80; ++i) cache.put(key_of(i), sample(100 + i));
    const std::string shard = shard_of(key_of(0));
    // As a process killed between renaming an entry into place and counting it leaves it.
    write_slot(path, shard, shard + " 1 1 0 d");
    cache.put(key_of(1000), sample(10));  // any shard
    expect_counters_match_listings(path);
    EXPECT_EQ(cache.stats().bytes, listed(path).bytes);
    // A counters file cut short, or of garbage: every slot is recounted.
    const std::string table = test::read_file(path / ".shards");
    test::write_file(path / ".shards", table.substr(0, 1000));
    cache.put(key_of(1001), sample(10));
    expect_counters_match_listings(path);
    test::write_file(path / ".shards", std::string(256 * 64, 'x'));
    EXPECT_EQ(cache.stats().entries, listed(path).entries);  // stats repairs too
    expect_counters_match_listings(path);
}

TEST(DiskCacheLayout, ACounterLeftWrongIsRepairedByTheNextCleanupOfItsShard) {
    TempDir dir;
    const fs::path path = dir.path() / "cache";
    const std::uint64_t entry_size = DiskProgramCache::encode_entry(key_of(0), sample(500)).size();
    DiskProgramCache cache(path, 60 * entry_size);
    for (int i = 0; i < 60; ++i) cache.put(key_of(i), sample(500));
    const std::string shard = shard_of(key_of(0));
    // Clean but wrong (an entry copied in by hand, a power loss): prune recounts every shard.
    write_slot(path, shard, shard + " 3 99 0 c");
    EXPECT_EQ(cache.prune(std::uint64_t{1} << 40), 0u);
    expect_counters_match_listings(path);
    // And an eviction from that shard recounts it: make its entries the oldest.
    write_slot(path, shard, shard + " 99999 99 1 c");  // over the bound, and the oldest
    for (int i = 0; i < 60; ++i)
        if (shard_of(key_of(i)) == shard) set_mtime(cache.entry_path(key_of(i)), 3600);
    cache.put(key_of(60), sample(500));
    const Slot s = slot(path, shard);
    EXPECT_EQ(s.state, 'c');
    EXPECT_EQ((Counted{s.bytes, s.entries}), listed(path, shard));
    EXPECT_LE(listed(path).bytes, 60 * entry_size);
}

// 8 processes put and get random keys under a bound that forces eviction, and are killed with
// SIGKILL at random instants (and started again). Every hit is the entry put under its key; the
// cache stays within its bound plus one entry per process; the next cleanup repairs the
// counters. CUDACORE_CACHE_STRESS_KEYS and CUDACORE_CACHE_STRESS_SECONDS make a longer run
// (100,000 keys, say); CI runs a few thousand keys for a few seconds.
TEST(DiskCacheLayout, ProcessesKilledAtRandomWhileStoringLeaveARepairableBoundedCache) {
    auto from_env = [](const char* name, unsigned long fallback) {
        const char* value = std::getenv(name);
        return value != nullptr && *value != '\0' ? std::stoul(value) : fallback;
    };
    const unsigned long keys = from_env("CUDACORE_CACHE_STRESS_KEYS", 3000);
    const unsigned long seconds = from_env("CUDACORE_CACHE_STRESS_SECONDS", 4);
    constexpr int processes = 8;
    constexpr std::size_t size = 1024;
    TempDir dir;
    const fs::path path = dir.path() / "cache";
    const std::uint64_t entry_size =
        DiskProgramCache::encode_entry(key_of(0), sample(size)).size() + 16;  // the name's digits
    const std::uint64_t bound = keys / 10 * entry_size;  // a tenth of the keys fit
    { DiskProgramCache create(path, bound); }
    std::mt19937 random(2024);
    auto start = [&](int seed) {
        return spawn({test::helper_path("cache_writer").string(), "stress", path.string(),
                      std::to_string(bound), std::to_string(keys), std::to_string(size),
                      std::to_string(seed), "0"});
    };
    std::vector<pid_t> workers;
    int seed = 0, kills = 0;
    for (int p = 0; p < processes; ++p) workers.push_back(start(seed++));
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (std::chrono::steady_clock::now() < end) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20 + random() % 80));
        const int victim = static_cast<int>(random() % processes);
        kill(workers[victim], SIGKILL);
        EXPECT_EQ(wait_for(workers[victim]), -SIGKILL) << "a worker failed (3: a wrong hit)";
        ++kills;
        workers[victim] = start(seed++);
    }
    for (pid_t pid : workers) kill(pid, SIGKILL);
    for (pid_t pid : workers) EXPECT_EQ(wait_for(pid), -SIGKILL) << "a worker failed";

    const Counted on_disk = listed(path);
    EXPECT_LE(on_disk.bytes, bound + processes * entry_size);
    EXPECT_GT(on_disk.entries, 0u);
    std::size_t dirty = 0;
    for (unsigned shard = 0; shard < 256; ++shard) {
        char name[3];
        std::snprintf(name, sizeof name, "%02x", shard);
        if (slot(path, name).state != 'c') ++dirty;
    }
    // The next cleanup (a put over the bound) repairs the counters, and the cache is exact.
    DiskProgramCache cache(path, bound);
    for (int i = 0; i < 20; ++i) cache.put(key_of(i), sample(size));
    expect_counters_match_listings(path);
    EXPECT_LE(listed(path).bytes, bound);
    std::map<std::string, int> results;
    for (const auto& item : fs::recursive_directory_iterator(path)) {
        const std::string name = item.path().filename().string();
        if (name.starts_with(".") && name.find(".tmp-") != std::string::npos)
            ++results["temporary"];
    }
    EXPECT_EQ(cache.stats().corrupt_entries, 0u);
    std::cout << kills << " kills, " << seed << " processes, " << keys << " keys; " << dirty
              << " counters left dirty, " << on_disk.entries << " entries (" << on_disk.bytes
              << " bytes, bound " << bound << ") before the cleanup; " << results["temporary"]
              << " temporary files left\n";
}

}  // namespace
