// The disk cache survives damage to its own bookkeeping: a shard folder replaced by a file or a
// symbolic link, the .shards counters deleted, cut short or holding impossible numbers, a
// read-only cache with a dirty counter. A put that wrote its entry never throws, the bound holds,
// prune repairs what it can and names what it cannot.
#include "shard_table.hpp"
#include "test_support.hpp"

#include "cudacore/disk_program_cache.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/warnings.hpp"

#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <set>

namespace {

using namespace cudacore;
using cudacore::test::TempDir;
namespace fs = std::filesystem;

CacheKey key_of(int n) { return CacheKey::of_bytes("damage key " + std::to_string(n)); }

ObjectCode sample(std::size_t size = 1000, char fill = 'd') {
    return ObjectCode::from_cubin(std::string(size, fill), "sample");
}

std::string shard_of(const CacheKey& key) { return key.hex().substr(0, 2); }

// `count` keys (numbered from `first` up) whose entries fall in `shard`, or outside it when
// `inside` is false.
std::vector<CacheKey> keys_in(const std::string& shard, std::size_t count, bool inside = true,
                              int first = 0) {
    std::vector<CacheKey> keys;
    for (int n = first; keys.size() < count; ++n)
        if ((shard_of(key_of(n)) == shard) == inside) keys.push_back(key_of(n));
    return keys;
}

std::uint64_t entry_size() { return DiskProgramCache::encode_entry(key_of(0), sample()).size(); }

struct Counted {
    std::uint64_t bytes = 0, entries = 0;
    bool operator==(const Counted&) const = default;
};

// What listings of the shard folders (or of one) find, without following symbolic links.
Counted listed(const fs::path& cache, const std::string& shard = "") {
    Counted counted;
    for (const auto& folder : fs::directory_iterator(cache)) {
        if (!folder.is_directory() || folder.is_symlink()) continue;
        if (!shard.empty() && folder.path().filename() != shard) continue;
        std::error_code error;
        for (const auto& item : fs::directory_iterator(folder.path(), error)) {
            const std::string name = item.path().filename().string();
            if (!item.is_regular_file() || !name.ends_with(".ccentry") || name.starts_with("."))
                continue;
            counted.bytes += item.file_size();
            ++counted.entries;
        }
    }
    return counted;
}

std::string hex(unsigned shard) {
    char name[3];
    std::snprintf(name, sizeof name, "%02x", shard);
    return name;
}

using Slot = test::ShardSlot;
Slot slot(const fs::path& cache, const std::string& shard) { return test::shard_slot(cache, shard); }
void write_slot(const fs::path& cache, const std::string& shard, const std::string& text) {
    test::write_shard_slot(cache, shard, text);
}

// Every slot clean and equal to a listing of its folder (shards in `except` aside).
void expect_counters_match_listings(const fs::path& cache, const std::set<std::string>& except = {}) {
    for (unsigned shard = 0; shard < 256; ++shard) {
        if (except.contains(hex(shard))) continue;
        const Slot s = slot(cache, hex(shard));
        EXPECT_EQ(s.state, 'c') << "shard " << hex(shard);
        EXPECT_EQ((Counted{s.bytes, s.entries}), listed(cache, hex(shard))) << "shard " << hex(shard);
    }
}

bool mentions(const std::vector<Warning>& warnings, const std::string& text) {
    return std::any_of(warnings.begin(), warnings.end(), [&](const Warning& w) {
        return w.kind == WarningKind::disk_cache_repaired && w.message.find(text) != std::string::npos;
    });
}

// Runs `body` in a child process that file permissions bind, and returns what it returns: as the
// caller when not root; as root, as uid and gid 65534 (nobody), with `tree` handed to that user
// for the call and back to root after.
std::string unprivileged(const fs::path& tree, const std::function<std::string()>& body) {
    const bool root = geteuid() == 0;
    constexpr uid_t nobody = 65534;
    auto hand_to = [&](uid_t user) {
        EXPECT_EQ(lchown(tree.c_str(), user, user), 0);
        for (const auto& item : fs::recursive_directory_iterator(tree))
            EXPECT_EQ(lchown(item.path().c_str(), user, user), 0) << item.path();
    };
    if (root) hand_to(nobody);
    int out[2];
    EXPECT_EQ(pipe(out), 0);
    const pid_t child = fork();
    if (child == 0) {
        ::close(out[0]);
        std::string result;
        if (root && (setgroups(0, nullptr) != 0 || setgid(nobody) != 0 || setuid(nobody) != 0)) {
            result = "could not drop root";
        } else {
            try {
                result = body();
            } catch (const std::exception& e) {
                result = std::string("exception: ") + e.what();
            }
        }
        for (std::size_t done = 0; done < result.size();) {
            const ssize_t n = ::write(out[1], result.data() + done, result.size() - done);
            if (n <= 0) break;
            done += static_cast<std::size_t>(n);
        }
        _exit(0);
    }
    ::close(out[1]);
    std::string result;
    char buffer[4096];
    for (ssize_t n; (n = ::read(out[0], buffer, sizeof buffer)) > 0;) result.append(buffer, n);
    ::close(out[0]);
    int status = 0;
    EXPECT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    if (root) hand_to(0);
    return result;
}

enum class Damage { file, symlink };

// What stands where shard `shard`'s folder was: a file, or a symbolic link to a folder outside the
// cache that holds a file named like an entry (nothing may follow it).
void damage_shard(const fs::path& cache, const std::string& shard, Damage damage,
                  const fs::path& outside) {
    fs::remove_all(cache / shard);
    if (damage == Damage::file) {
        test::write_file(cache / shard, "not a folder");
    } else {
        fs::create_directories(outside);
        test::write_file(outside / DiskProgramCache::entry_name(keys_in(shard, 1)[0]), "theirs");
        fs::create_directory_symlink(outside, cache / shard);
    }
}

class ShardReplaced : public ::testing::TestWithParam<Damage> {};

// The first case: once the damaged shard holds the oldest entry, every put threw
// "open '<dir>/04' failed: Not a directory" although its entry was written, and eviction stopped.
TEST_P(ShardReplaced, HoldingTheOldestEntryCostsNeitherAPutNorTheBound) {
    TempDir dir;
    const fs::path path = dir.path() / "cache";
    const std::uint64_t bound = 40 * entry_size();
    DiskProgramCache cache(path, bound);
    const std::string damaged = shard_of(key_of(0));
    cache.put(key_of(0), sample());  // the oldest entry, in `damaged`
    const auto others = keys_in(damaged, 120, false, 1);
    for (int i = 0; i < 35; ++i) cache.put(others[i], sample());
    damage_shard(path, damaged, GetParam(), dir.path() / "outside");
    test::WarningLog warnings;
    for (int i = 35; i < 120; ++i) {
        ASSERT_NO_THROW(cache.put(others[i], sample())) << "put " << i;
        EXPECT_EQ(cache.get(others[i]), sample()) << "put " << i;
        EXPECT_LE(listed(path).bytes, bound) << "after put " << i;
    }
    EXPECT_TRUE(fs::is_directory(fs::symlink_status(path / damaged))) << "replaced by a folder";
    EXPECT_TRUE(mentions(warnings.seen, (path / damaged).string())) << "named in a warning";
    if (GetParam() == Damage::symlink) {
        EXPECT_EQ(test::read_file(dir.path() / "outside" /
                                  DiskProgramCache::entry_name(keys_in(damaged, 1)[0])),
                  "theirs");  // never followed
    }
    EXPECT_EQ(cache.stats().bytes, listed(path).bytes);
    expect_counters_match_listings(path);
}

// A put into the damaged shard itself replaces what stands there by a folder and stores.
TEST_P(ShardReplaced, APutIntoItReplacesItByAFolderAndStores) {
    TempDir dir;
    const fs::path path = dir.path() / "cache";
    DiskProgramCache cache(path);
    const CacheKey key = key_of(0);
    cache.put(key, sample());
    damage_shard(path, shard_of(key), GetParam(), dir.path() / "outside");
    EXPECT_FALSE(cache.get(key));  // a miss, not an error
    ASSERT_NO_THROW(cache.put(key, sample(500)));
    EXPECT_EQ(cache.get(key), sample(500));
    EXPECT_TRUE(fs::is_directory(fs::symlink_status(path / shard_of(key))));
    expect_counters_match_listings(path);
}

// prune replaces it too, names it, and still prunes to the bound.
TEST_P(ShardReplaced, PruneReplacesItNamesItAndPrunes) {
    TempDir dir;
    const fs::path path = dir.path() / "cache";
    DiskProgramCache cache(path);
    const std::string damaged = shard_of(key_of(0));
    cache.put(key_of(0), sample());
    const auto others = keys_in(damaged, 30, false, 1);
    for (const auto& key : others) cache.put(key, sample());
    damage_shard(path, damaged, GetParam(), dir.path() / "outside");
    const auto report = cache.prune_and_repair(10 * entry_size());
    EXPECT_EQ(report.removed, 20u);
    ASSERT_EQ(report.repaired.size(), 1u);
    EXPECT_NE(report.repaired[0].find((path / damaged).string()), std::string::npos)
        << report.repaired[0];
    EXPECT_TRUE(report.skipped.empty());
    EXPECT_EQ(listed(path).bytes, 10 * entry_size());
    EXPECT_TRUE(fs::is_directory(fs::symlink_status(path / damaged)));
    expect_counters_match_listings(path);
}

INSTANTIATE_TEST_SUITE_P(DiskCacheDamage, ShardReplaced,
                         ::testing::Values(Damage::file, Damage::symlink),
                         [](const auto& info) {
                             return info.param == Damage::file ? "ByAFile" : "ByASymlink";
                         });

// .shards, a dot file that backups and sync tools drop: the next open must not write clean,
// empty slots over full shards.
TEST(DiskCacheDamage, DeletedCountersAreRecountedSoStatsAndTheBoundHold) {
    TempDir dir;
    const fs::path path = dir.path() / "cache";
    const std::uint64_t bound = 40 * entry_size();
    {
        DiskProgramCache cache(path, bound);
        for (int i = 0; i < 40; ++i) cache.put(key_of(i), sample());
    }
    fs::remove(path / ".shards");
    DiskProgramCache cache(path, bound);  // the next process
    EXPECT_EQ(cache.stats().entries, 40u);
    EXPECT_EQ(cache.stats().bytes, listed(path).bytes);
    for (int i = 40; i < 80; ++i) {
        cache.put(key_of(i), sample());
        EXPECT_LE(listed(path).bytes, bound) << "after put " << i;
    }
    // Deleted while the cache is open: the next put recounts.
    fs::remove(path / ".shards");
    for (int i = 80; i < 100; ++i) cache.put(key_of(i), sample());
    EXPECT_LE(listed(path).bytes, bound);
    EXPECT_EQ(cache.stats().bytes, listed(path).bytes);
    expect_counters_match_listings(path);
}

// A slot that parses but cannot be (clean, no entries, 10^9 bytes) was trusted: every put then
// evicted the whole rest of the cache.
TEST(DiskCacheDamage, AnImpossibleSlotIsRecountedNotTrusted) {
    TempDir dir;
    const fs::path path = dir.path() / "cache";
    DiskProgramCache cache(path, 40 * entry_size());
    std::set<std::string> used;
    for (int i = 0; i < 30; ++i) {
        cache.put(key_of(i), sample());
        used.insert(shard_of(key_of(i)));
    }
    std::string empty = "00";
    for (unsigned shard = 0; used.contains(empty); ++shard) empty = hex(shard);
    const std::vector<std::string> impossible = {
        " 1000000000 0 0 c",                      // bytes without entries
        " 1000000000000000000 1 0 c",             // more than the file system holds
        " 10 5 0 c",                              // less than five entries' headers
        " 50000000000 2 0 c",                     // more than two entries can weigh
        " 100 1 -5 c",                            // a time before 1970
    };
    for (const std::string& numbers : impossible) {
        write_slot(path, empty, empty + numbers);
        cache.put(key_of(1000), sample());
        for (int i = 0; i < 30; ++i)
            EXPECT_TRUE(fs::exists(cache.entry_path(key_of(i)))) << numbers << ": entry " << i;
        EXPECT_EQ(slot(path, empty).state, 'c') << numbers;
        EXPECT_EQ(slot(path, empty).bytes, 0u) << numbers;
        EXPECT_EQ(cache.stats().bytes, listed(path).bytes) << numbers;
    }
    expect_counters_match_listings(path);
}

// Two slots of 2^63 bytes made the sum wrap to what the other shards hold: the bound was lost.
TEST(DiskCacheDamage, SlotsWhoseSumWouldWrapAreRecountedAndTheBoundHolds) {
    TempDir dir;
    const fs::path path = dir.path() / "cache";
    const std::uint64_t bound = 40 * entry_size();
    DiskProgramCache cache(path, bound);
    const std::string a = shard_of(key_of(0)), b = shard_of(keys_in(a, 1, false)[0]);
    const auto in_a = keys_in(a, 12), in_b = keys_in(b, 12);
    for (int i = 0; i < 12; ++i) {
        cache.put(in_a[i], sample());
        cache.put(in_b[i], sample());
    }
    for (const std::string& shard : {a, b})
        write_slot(path, shard, shard + " 9223372036854775808 12 9000000000000000000 c");
    std::set<std::string> ab = {a, b};
    int put = 0;
    for (int n = 0; put < 60; ++n) {
        if (ab.contains(shard_of(key_of(n)))) continue;
        cache.put(key_of(n), sample());
        ++put;
        EXPECT_LE(listed(path).bytes, bound) << "after put " << put;
    }
    EXPECT_LE(cache.stats().bytes, bound);
    expect_counters_match_listings(path);
}

// A slot possible but wrong (more than the whole bound, its entries recent): listed before any
// other shard gives way, instead of every put evicting the rest of the cache.
TEST(DiskCacheDamage, AShardClaimingMoreThanTheBoundIsListedBeforeOthersGiveWay) {
    TempDir dir;
    const fs::path path = dir.path() / "cache";
    const std::uint64_t bound = 40 * entry_size();
    DiskProgramCache cache(path, bound);
    const std::string inflated = shard_of(key_of(0));
    cache.put(key_of(0), sample());
    const auto others = keys_in(inflated, 30, false, 1);
    for (const auto& key : others) cache.put(key, sample());
    write_slot(path, inflated,
               inflated + " " + std::to_string(10 * bound) + " 1 9000000000000000000 c");
    cache.put(keys_in(inflated, 31, false, 1)[30], sample());
    for (const auto& key : others) EXPECT_TRUE(fs::exists(cache.entry_path(key)));
    EXPECT_TRUE(fs::exists(cache.entry_path(key_of(0))));
    expect_counters_match_listings(path);
}

// A clean, empty slot over a full shard (what an older version writes over a dropped .shards,
// or a table restored from a backup) is possible, so not caught when read: the next put into
// that shard finds entries in its folder and recounts it.
TEST(DiskCacheDamage, AnEmptySlotOverAFullShardIsRecountedByTheNextPutIntoIt) {
    TempDir dir;
    const fs::path path = dir.path() / "cache";
    const std::uint64_t bound = 40 * entry_size();
    DiskProgramCache cache(path, bound);
    const std::string full = shard_of(key_of(0));
    const auto inside = keys_in(full, 13);
    for (int i = 0; i < 12; ++i) cache.put(inside[i], sample());
    const auto outside = keys_in(full, 60, false);
    for (int i = 0; i < 25; ++i) cache.put(outside[i], sample());
    write_slot(path, full, full + " 0 0 0 c");
    cache.put(inside[12], sample());
    const Slot s = slot(path, full);
    EXPECT_EQ((Counted{s.bytes, s.entries}), listed(path, full));
    for (int i = 25; i < 60; ++i) {
        cache.put(outside[i], sample());
        EXPECT_LE(listed(path).bytes, bound) << "after put " << i;
    }
    expect_counters_match_listings(path);
}

// Counters cut short, or something other than a regular file where they belong (a directory,
// a symbolic link, a FIFO): replaced, recounted, and puts store.
TEST(DiskCacheDamage, CountersThatAreNotARegularFileAreReplaced) {
    TempDir dir;
    const fs::path path = dir.path() / "cache";
    const std::uint64_t bound = 20 * entry_size();
    DiskProgramCache cache(path, bound);
    for (int i = 0; i < 20; ++i) cache.put(key_of(i), sample());
    const fs::path counters = path / ".shards";
    const std::vector<std::function<void()>> damages = {
        [&] { test::write_file(counters, test::read_file(counters).substr(0, 700)); },
        [&] { fs::create_directory(counters); },
        [&] { fs::create_symlink(dir.path() / "elsewhere", counters); },
        [&] { ASSERT_EQ(mkfifo(counters.c_str(), 0600), 0); },
    };
    int n = 100;
    for (std::size_t d = 0; d < damages.size(); ++d) {
        if (d > 0) fs::remove(counters);
        damages[d]();
        for (int i = 0; i < 10; ++i, ++n) {
            ASSERT_NO_THROW(cache.put(key_of(n), sample())) << "damage " << d;
            EXPECT_EQ(cache.get(key_of(n)), sample()) << "damage " << d;
        }
        EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(counters))) << "damage " << d;
        EXPECT_LE(listed(path).bytes, bound) << "damage " << d;
        EXPECT_EQ(cache.stats().bytes, listed(path).bytes) << "damage " << d;
    }
    EXPECT_FALSE(fs::exists(dir.path() / "elsewhere"));  // the link was never followed
    expect_counters_match_listings(path);
    // A new process opening it finds it whole.
    fs::remove(counters);
    DiskProgramCache again(path, bound);
    EXPECT_EQ(fs::file_size(counters), 256u * 64);
    EXPECT_EQ(again.stats().bytes, listed(path).bytes);
}

// A read-only cache (a shared, mounted copy) with a dirty counter: stats counts from the listing
// and leaves the counters as they are.
TEST(DiskCacheDamage, AReadOnlyCacheWithADirtySlotIsCountedWithoutRepairing) {
    TempDir dir;
    const fs::path path = dir.path() / "cache";
    {
        DiskProgramCache cache(path);
        for (int i = 0; i < 30; ++i) cache.put(key_of(i), sample(100 + i));
    }
    const std::string shard = shard_of(key_of(0));
    write_slot(path, shard, shard + " 7 1 0 d");
    const std::string before = test::read_file(path / ".shards");
    fs::permissions(path / ".shards", fs::perms::owner_read, fs::perm_options::replace);
    fs::permissions(path, fs::perms::owner_read | fs::perms::owner_exec, fs::perm_options::replace);
    const std::string result = unprivileged(dir.path(), [&] {
        const auto cache = DiskProgramCache::open_existing(path);
        const CacheStats stats = cache->stats();
        const bool hit = cache->get(key_of(3)) == sample(103);
        return std::to_string(stats.entries) + " " + std::to_string(stats.bytes) +
               (hit ? " hit" : " miss");
    });
    fs::permissions(path, fs::perms::owner_all, fs::perm_options::replace);
    fs::permissions(path / ".shards", fs::perms::owner_read | fs::perms::owner_write,
                    fs::perm_options::replace);
    EXPECT_EQ(result, "30 " + std::to_string(listed(path).bytes) + " hit");
    EXPECT_EQ(test::read_file(path / ".shards"), before);  // not repaired
}

// prune repairs what it can (counters deleted, a shard folder replaced by a file) and skips and
// names what it cannot (a shard folder it may not read), and prunes the rest to the bound.
TEST(DiskCacheDamage, PruneRepairsWhatItCanAndSkipsAndNamesWhatItCannot) {
    TempDir dir;
    const fs::path path = dir.path() / "cache";
    const std::string as_file = shard_of(key_of(0));
    const std::string unreadable = shard_of(keys_in(as_file, 1, false)[0]);
    {
        DiskProgramCache cache(path);
        std::set<std::string> damaged = {as_file, unreadable};
        for (int n = 0, kept = 0; kept < 40; ++n) {
            cache.put(key_of(n), sample());
            if (!damaged.contains(shard_of(key_of(n)))) ++kept;
        }
    }
    const Counted in_unreadable = listed(path, unreadable);
    ASSERT_GT(in_unreadable.entries, 0u);
    fs::remove(path / ".shards");
    fs::remove_all(path / as_file);
    test::write_file(path / as_file, "junk");
    fs::permissions(path / unreadable, fs::perms::none, fs::perm_options::replace);
    const std::string result = unprivileged(dir.path(), [&] {
        const auto cache = DiskProgramCache::open_existing(path);  // as `cudacore cache prune`
        const auto report = cache->prune_and_repair(10 * entry_size());
        std::string text = "removed " + std::to_string(report.removed) + "\n";
        for (const auto& line : report.repaired) text += "repaired: " + line + "\n";
        for (const auto& line : report.skipped) text += "skipped: " + line + "\n";
        return text;
    });
    fs::permissions(path / unreadable, fs::perms::owner_all, fs::perm_options::replace);
    EXPECT_EQ(result.find("exception"), std::string::npos) << result;
    auto named = [&](const std::string& how, const fs::path& what) {
        return result.find(how + ": '" + what.string() + "'") != std::string::npos;
    };
    EXPECT_TRUE(named("repaired", path / ".shards")) << result;
    EXPECT_TRUE(named("repaired", path / as_file)) << result;
    EXPECT_TRUE(named("skipped", path / unreadable)) << result;
    EXPECT_EQ(listed(path).bytes, 10 * entry_size() + in_unreadable.bytes);
    EXPECT_EQ(listed(path, unreadable), in_unreadable);  // untouched
    EXPECT_TRUE(fs::is_directory(fs::symlink_status(path / as_file)));
    expect_counters_match_listings(path, {unreadable});
    // Readable again, the next prune counts it.
    DiskProgramCache cache(path);
    EXPECT_TRUE(cache.prune_and_repair(std::uint64_t{1} << 30).skipped.empty());
    expect_counters_match_listings(path);
}

}  // namespace
