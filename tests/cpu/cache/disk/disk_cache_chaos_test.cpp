// Many processes (more than the machine has cores) put, get and prune on one disk cache while this
// process damages the cache's bookkeeping (deletes .shards, writes impossible or garbage slots,
// replaces shard folders by files and symbolic links) and SIGKILLs some of them at random
// moments. At the end: no worker found a wrong value or failed a put that wrote its entry, every
// get returns a value put under its key or a miss, and the cache is back within its bound with
// exact counters after the next puts and a prune.
//
// CI runs 12 processes for 8 seconds; CUDACORE_CACHE_CHAOS_SECONDS and
// CUDACORE_CACHE_CHAOS_PROCESSES make a longer, larger run.
#include "test_support.hpp"

#include "cudacore/disk_program_cache.hpp"
#include "cudacore/errors.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <thread>

namespace {

using namespace cudacore;
using cudacore::test::TempDir;
using cudacore::test::spawn;
using cudacore::test::wait_for;
namespace fs = std::filesystem;

unsigned long from_env(const char* name, unsigned long fallback) {
    const char* value = std::getenv(name);
    return value != nullptr && *value != '\0' ? std::stoul(value) : fallback;
}

CacheKey chaos_key(unsigned long long key) {
    return CacheKey::of_bytes("chaos key " + std::to_string(key));
}

// As helper_cache_writer's chaos mode writes it.
ObjectCode chaos_code(unsigned long long key, const std::string& tag, std::size_t size) {
    const std::size_t seed = std::hash<std::string>{}(std::to_string(key) + "/" + tag);
    std::string bytes(size, '\0');
    for (std::size_t at = 0; at < size; ++at) bytes[at] = static_cast<char>((seed + at * 31) % 251);
    return ObjectCode::from_cubin(std::move(bytes), "chaos-" + std::to_string(key) + "-" + tag);
}

std::string hex(unsigned shard) {
    char name[3];
    std::snprintf(name, sizeof name, "%02x", shard);
    return name;
}

struct Counted {
    std::uint64_t bytes = 0, entries = 0;
    bool operator==(const Counted&) const = default;
};

Counted listed(const fs::path& cache, const std::string& shard = "") {
    Counted counted;
    for (const auto& folder : fs::directory_iterator(cache)) {
        if (!folder.is_directory() || folder.is_symlink()) continue;
        if (!shard.empty() && folder.path().filename() != shard) continue;
        for (const auto& item : fs::directory_iterator(folder.path())) {
            const std::string name = item.path().filename().string();
            if (!item.is_regular_file() || !name.ends_with(".ccentry") || name.starts_with("."))
                continue;
            counted.bytes += item.file_size();
            ++counted.entries;
        }
    }
    return counted;
}

// A file named like an entry, in the folder outside the cache that planted symbolic links point
// at: nothing may follow them.
fs::path planted(const fs::path& outside) {
    return outside / DiskProgramCache::entry_name(CacheKey::of_bytes("planted"));
}

// The damage a careless user, a sync tool or a bit flip does to the cache's bookkeeping.
class Vandal {
public:
    Vandal(fs::path cache, fs::path outside, unsigned seed)
        : cache_(std::move(cache)), outside_(std::move(outside)), random_(seed) {
        fs::create_directories(outside_);
        test::write_file(planted(outside_), "not theirs to touch");
    }

    void strike() {
        switch (random_() % 4) {
            case 0:
                if (fs::remove(cache_ / ".shards", ignored_)) ++counts_["counters deleted"];
                break;
            case 1:
                corrupt_slots();
                break;
            case 2:
            case 3:
                replace_shard_folder(random_() % 2 == 0);
                break;
        }
    }
    const std::map<std::string, int>& counts() const { return counts_; }

private:
    void corrupt_slots() {
        const int fd = ::open((cache_ / ".shards").c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0) return;
        const std::vector<std::string> forms = {
            " 1000000000 0 0 c",                                  // bytes without entries
            " 9223372036854775808 3 0 c",                         // 2^63: a sum would wrap
            " 1 999 0 c",                                         // fewer bytes than headers
            " 5000000 1 9000000000000000000 c",                   // possible, wrong, recent
            " garbage here",
            " 12 1 0 d",
        };
        for (int n = 1 + static_cast<int>(random_() % 3); n > 0; --n) {
            const unsigned shard = random_() % 256;
            std::string line = hex(shard) + forms[random_() % forms.size()];
            line.resize(63, ' ');
            line += '\n';
            if (::pwrite(fd, line.data(), line.size(), shard * 64) == 64) ++counts_["slots corrupted"];
        }
        ::close(fd);
    }

    void replace_shard_folder(bool by_symlink) {
        const fs::path folder = cache_ / hex(random_() % 256);
        // Workers write into it meanwhile: removing it may take a few tries, or lose the race.
        for (int attempt = 0; attempt < 5 && fs::exists(fs::symlink_status(folder)); ++attempt)
            fs::remove_all(folder, ignored_);
        if (fs::exists(fs::symlink_status(folder))) return;
        if (by_symlink) {
            fs::create_directory_symlink(outside_, folder, ignored_);
        } else {
            const int fd = ::open(folder.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
            if (fd >= 0) {
                if (::write(fd, "junk", 4) != 4) ignored_ = std::make_error_code(std::errc::io_error);
                ::close(fd);
            }
        }
        if (fs::exists(fs::symlink_status(folder)) && !fs::is_directory(fs::symlink_status(folder)))
            ++counts_[by_symlink ? "shard folders replaced by a symlink"
                                 : "shard folders replaced by a file"];
    }

    fs::path cache_, outside_;
    std::mt19937 random_;
    std::error_code ignored_;
    std::map<std::string, int> counts_;
};

TEST(DiskCacheChaos, ProcessesSurviveDamagedBookkeepingAndKillsWithoutAWrongResult) {
    const unsigned long seconds = from_env("CUDACORE_CACHE_CHAOS_SECONDS", 8);
    const int processes = static_cast<int>(from_env("CUDACORE_CACHE_CHAOS_PROCESSES", 12));
    constexpr unsigned long keys = 1500;
    constexpr std::size_t size = 1500;
    TempDir dir;
    const fs::path path = dir.path() / "cache";
    const fs::path log = dir.path() / "puts.log";
    const std::uint64_t entry_size =
        DiskProgramCache::encode_entry(chaos_key(0), chaos_code(0, "1234567-12345", size)).size();
    const std::uint64_t bound = 150 * entry_size;  // a tenth of the keys fit
    { DiskProgramCache create(path, bound); }

    std::mt19937 random(from_env("CUDACORE_CACHE_CHAOS_SEED", 52));
    int started = 0, kills = 0, strikes = 0;
    std::vector<std::string> failures;  // workers that ended on their own
    auto start = [&] {
        ++started;
        return spawn({test::helper_path("cache_writer").string(), "chaos", path.string(),
                      std::to_string(bound), std::to_string(keys), std::to_string(size),
                      std::to_string(random()), log.string()});
    };
    std::vector<pid_t> workers;
    for (int p = 0; p < processes; ++p) workers.push_back(start());
    Vandal vandal(path, dir.path() / "outside", random());
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (std::chrono::steady_clock::now() < end) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5 + random() % 40));
        if (random() % 3 == 0) {
            const std::size_t victim = random() % workers.size();
            kill(workers[victim], SIGKILL);
            if (const int status = wait_for(workers[victim]); status != -SIGKILL)
                failures.push_back("worker ended with " + std::to_string(status));
            ++kills;
            workers[victim] = start();
        } else {
            vandal.strike();
            ++strikes;
        }
        for (pid_t& worker : workers) {  // one that ended on its own failed
            int status = 0;
            if (waitpid(worker, &status, WNOHANG) == worker) {
                failures.push_back("worker ended with " +
                                   std::to_string(WIFEXITED(status) ? WEXITSTATUS(status)
                                                                    : -WTERMSIG(status)));
                worker = start();
            }
        }
    }
    for (pid_t pid : workers) kill(pid, SIGKILL);
    for (pid_t pid : workers)
        if (const int status = wait_for(pid); status != -SIGKILL)
            failures.push_back("worker ended with " + std::to_string(status));
    // Exit codes: 3 a wrong value, 4 a put that threw although it wrote, 5 / 6 a get / prune
    // that threw (the helper says which on stderr).
    EXPECT_EQ(failures, std::vector<std::string>{});

    // What was put under each key, and the puts that failed without writing.
    std::map<unsigned long long, std::set<std::string>> put;
    std::map<std::string, int> failed_puts;
    {
        std::istringstream lines(test::read_file(log));
        std::string line;
        while (std::getline(lines, line)) {
            std::istringstream words(line);
            std::string what, tag;
            unsigned long long key = 0;
            words >> what >> key >> tag;
            if (what == "put") put[key].insert(tag);
            if (what == "failed") {
                std::string why;
                std::getline(words, why);
                ++failed_puts[why.substr(why.rfind(": ") + 2)];
            }
        }
    }

    // The next puts (one process now, no damage) repair what is left and restore the bound.
    const Counted before = listed(path);
    DiskProgramCache cache(path, bound);
    for (unsigned long long key = keys; key < keys + 30; ++key)
        ASSERT_NO_THROW(cache.put(chaos_key(key), chaos_code(key, "final", size)));
    const Counted after_puts = listed(path);
    EXPECT_LE(after_puts.bytes, bound);
    EXPECT_EQ(cache.stats().bytes, after_puts.bytes);
    const auto report = cache.prune_and_repair(bound);
    EXPECT_EQ(report.skipped, std::vector<std::string>{});
    EXPECT_LE(listed(path).bytes, bound);
    for (unsigned shard = 0; shard < 256; ++shard)
        EXPECT_TRUE(fs::is_directory(fs::symlink_status(path / hex(shard))) ||
                    !fs::exists(fs::symlink_status(path / hex(shard))))
            << hex(shard);

    // Every get: a value put under its key, or a miss.
    int hits = 0, wrong = 0;
    for (unsigned long long key = 0; key < keys; ++key) {
        const auto found = cache.get(chaos_key(key));
        if (!found) continue;
        ++hits;
        const std::string prefix = "chaos-" + std::to_string(key) + "-";
        const std::string tag =
            found->name().starts_with(prefix) ? found->name().substr(prefix.size()) : "";
        if (!put[key].contains(tag) || !(*found == chaos_code(key, tag, size))) ++wrong;
    }
    EXPECT_EQ(wrong, 0);
    EXPECT_GT(hits, 0);
    EXPECT_EQ(cache.stats().corrupt_entries, 0u);
    EXPECT_EQ(test::read_file(planted(dir.path() / "outside")), "not theirs to touch");

    std::size_t puts = 0;
    for (const auto& [key, tags] : put) puts += tags.size();
    std::cout << processes << " processes at once (" << started << " started, " << kills
              << " SIGKILLed) for " << seconds << " s; " << puts << " puts; " << strikes
              << " strikes:";
    for (const auto& [what, count] : vandal.counts()) std::cout << " " << what << " " << count << ";";
    std::cout << "\nbefore the cleanup " << before.entries << " entries, " << before.bytes
              << " bytes (bound " << bound << "); after 30 puts " << after_puts.bytes
              << " bytes; " << hits << " hits, " << wrong << " wrong; prune repaired "
              << report.repaired.size() << "\nputs that failed without writing:";
    for (const auto& [why, count] : failed_puts) std::cout << "\n  " << count << " x " << why;
    std::cout << "\n";
}

}  // namespace
