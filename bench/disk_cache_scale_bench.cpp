// How put and get of the program caches scale with the number of entries (not a Google
// Benchmark: each size needs a cache filled first, and the table compares sizes).
//
//   disk_cache_scale_bench [--max ENTRIES] [--dir FOLDER]
//
// Disk tier: a DiskProgramCache is filled with synthetic 4 KB entries to 1,000, 10,000, 100,000
// and 1,000,000 entries (up to --max, or $CUDACORE_SCALE_BENCH_MAX; default 1,000,000). The fill
// writes entry files straight into their shard folders (no fsync, so a million takes a minute,
// not an hour) and prune() then recounts every shard. At each size: 200 puts of new keys and
// 500 gets of random filled keys through the public API, median and p99; beside them the raw
// file-system calls a put and a get cannot avoid (a 4 KB file written, fsynced and renamed into
// place with the folder fsynced; a 4 KB file opened and read), timed in the same folders.
// Memory tier: MemoryProgramCache filled by put to the same sizes; 10,000 puts of new keys
// (each evicting one entry: the cache is bounded at the size) and 10,000 gets of random keys;
// beside them a bare std::unordered_map of the same keys (find; erase + insert), the floor that
// the processor's caches set: at a million entries every lookup misses them, whatever the map.
// Prints, for each tier, the ratio of the largest size's median (and p99) to the smallest's.
#include "cudacore/disk_program_cache.hpp"
#include "cudacore/memory_program_cache.hpp"

#include "support/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

using namespace cudacore;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr std::size_t entry_bytes = 4096;

CacheKey key_of(std::uint64_t n) { return CacheKey::of_bytes("scale key " + std::to_string(n)); }

ObjectCode code_of(std::uint64_t n) {
    std::string bytes(entry_bytes, static_cast<char>('a' + n % 26));
    return ObjectCode::from_cubin(std::move(bytes), "entry");
}

struct Summary {
    double median_us = 0, p99_us = 0;
};

Summary summarize(std::vector<double> samples) {
    std::sort(samples.begin(), samples.end());
    const auto at = [&](double q) {
        return samples[std::min(samples.size() - 1, static_cast<std::size_t>(q * samples.size()))];
    };
    return {at(0.5), at(0.99)};
}

template <typename F>
double time_us(F&& f) {
    const auto start = Clock::now();
    f();
    return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

void write_plain(const fs::path& path, const std::string& bytes) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || ::write(fd, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size())) {
        std::fprintf(stderr, "disk_cache_scale_bench: writing %s: %s\n", path.c_str(),
                     std::strerror(errno));
        std::exit(1);
    }
    ::close(fd);
}

std::string read_plain(const fs::path& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    std::string bytes(entry_bytes + 256, '\0');
    const ssize_t n = fd < 0 ? -1 : ::read(fd, bytes.data(), bytes.size());
    if (fd >= 0) ::close(fd);
    bytes.resize(n < 0 ? 0 : static_cast<std::size_t>(n));
    return bytes;
}

struct Row {
    std::uint64_t entries;
    Summary put, get, raw_put, raw_get;
    double stats_us = -1;  // the disk tier's stats() (what `cudacore cache stats` reads)
};

void print_rows(const char* tier, const std::vector<Row>& rows, const char* raw_name) {
    const bool raw = true;
    std::printf("\n%s\n", tier);
    std::printf("| entries | put median | put p99 | get median | get p99 | %s put median | %s get "
                "median |\n",
                raw_name, raw_name);
    std::printf("|---|---|---|---|---|%s\n", raw ? "---|---|" : "");
    for (const Row& row : rows) {
        std::printf("| %llu | %.2f us | %.2f us | %.2f us | %.2f us |",
                    static_cast<unsigned long long>(row.entries), row.put.median_us, row.put.p99_us,
                    row.get.median_us, row.get.p99_us);
        std::printf(" %.2f us | %.2f us |", row.raw_put.median_us, row.raw_get.median_us);
        std::printf("\n");
    }
    if (rows.size() < 2) return;
    const Row& small = rows.front();
    const Row& large = rows.back();
    std::printf("ratio %llu / %llu entries: put median %.2f, put p99 %.2f, get median %.2f, "
                "get p99 %.2f",
                static_cast<unsigned long long>(large.entries),
                static_cast<unsigned long long>(small.entries),
                large.put.median_us / small.put.median_us, large.put.p99_us / small.put.p99_us,
                large.get.median_us / small.get.median_us, large.get.p99_us / small.get.p99_us);
    if (raw) {
        std::printf("; %s put median %.2f, %s get median %.2f", raw_name,
                    large.raw_put.median_us / small.raw_put.median_us, raw_name,
                    large.raw_get.median_us / small.raw_get.median_us);
    }
    std::printf("\n");
    if (rows.front().stats_us < 0) return;
    std::printf("stats() median of 5:");
    for (const Row& row : rows) {
        std::printf(" %llu entries %.0f us;", static_cast<unsigned long long>(row.entries),
                    row.stats_us);
    }
    std::printf("\n");
}

std::vector<Row> disk_tier(const std::vector<std::uint64_t>& sizes, const fs::path& folder) {
    DiskProgramCache cache(folder, std::uint64_t{1} << 42);
    std::mt19937_64 random(7);
    std::vector<Row> rows;
    std::uint64_t filled = 0;
    std::uint64_t fresh = std::uint64_t{1} << 40;  // keys of measured puts, never filled
    const std::string entry = DiskProgramCache::encode_entry(key_of(0), code_of(0));
    for (const std::uint64_t size : sizes) {
        const auto fill_start = Clock::now();
        for (; filled < size; ++filled) {
            const CacheKey key = key_of(filled);
            const fs::path path = cache.entry_path(key);
            if (filled < 4096) fs::create_directory(path.parent_path());  // 0700: umask aside
            write_plain(path, DiskProgramCache::encode_entry(key, code_of(filled)));
        }
        cache.prune(std::uint64_t{1} << 42);  // recounts every shard
        const double fill_s = std::chrono::duration<double>(Clock::now() - fill_start).count();
        Row row{size, {}, {}, {}, {}, -1};
        std::vector<double> puts, gets, raw_puts, raw_gets;
        for (int i = 0; i < 200; ++i) {
            const std::uint64_t n = fresh++;
            const ObjectCode code = code_of(n);
            puts.push_back(time_us([&] { cache.put(key_of(n), code); }));
            // The raw floor: the same bytes written, fsynced, renamed and the folder fsynced.
            const fs::path path = cache.entry_path(key_of(fresh++));
            fs::create_directory(path.parent_path());
            const int folder_fd = ::open(path.parent_path().c_str(), O_RDONLY | O_DIRECTORY);
            raw_puts.push_back(time_us([&] {
                detail::write_file_atomically_at(folder_fd, path.filename().string(), entry, 0600,
                                                 path);
            }));
            ::close(folder_fd);
            fs::remove(path);
        }
        for (int i = 0; i < 500; ++i) {
            const std::uint64_t n = random() % size;
            const CacheKey key = key_of(n);
            std::optional<ObjectCode> got;
            gets.push_back(time_us([&] { got = cache.get(key); }));
            if (!got) {
                std::fprintf(stderr, "disk_cache_scale_bench: entry %llu missing\n",
                             static_cast<unsigned long long>(n));
                std::exit(1);
            }
            const fs::path path = cache.entry_path(key_of(random() % size));
            std::string bytes;
            raw_gets.push_back(time_us([&] { bytes = read_plain(path); }));
        }
        std::vector<double> stats_times;
        for (int i = 0; i < 5; ++i) stats_times.push_back(time_us([&] { (void)cache.stats(); }));
        row.stats_us = summarize(stats_times).median_us;
        row.put = summarize(puts);
        row.get = summarize(gets);
        row.raw_put = summarize(raw_puts);
        row.raw_get = summarize(raw_gets);
        std::fprintf(stderr, "disk: %llu entries (filled in %.1f s), stats says %llu\n",
                     static_cast<unsigned long long>(size), fill_s,
                     static_cast<unsigned long long>(cache.stats().entries));
        rows.push_back(row);
    }
    return rows;
}

std::vector<Row> memory_tier(const std::vector<std::uint64_t>& sizes) {
    std::vector<Row> rows;
    const ObjectCode code = code_of(0);  // one value: the entries share its bytes
    const std::uint64_t charged = MemoryProgramCache::entry_size(code);
    std::mt19937_64 random(11);
    for (const std::uint64_t size : sizes) {
        MemoryProgramCache cache(size * charged);  // full at `size`: every later put evicts one
        for (std::uint64_t n = 0; n < size; ++n) cache.put(key_of(n), code);
        std::vector<CacheKey> keys;
        for (int i = 0; i < 10000; ++i) keys.push_back(key_of(size + i));
        std::vector<double> puts, gets;
        for (int i = 0; i < 10000; ++i) puts.push_back(time_us([&] { cache.put(keys[i], code); }));
        // Keys still there: the most recent `size`, so those above the evicted prefix.
        const std::uint64_t first = 10000;
        for (int i = 0; i < 10000; ++i) {
            const CacheKey key = key_of(first + random() % size);
            std::optional<ObjectCode> got;
            gets.push_back(time_us([&] { got = cache.get(key); }));
            if (!got) {
                std::fprintf(stderr, "disk_cache_scale_bench: memory entry missing\n");
                std::exit(1);
            }
        }
        // The floor: a bare hash map of the same keys and values, no recency kept (a find, and an
        // insert with an erase), timed on the same keys.
        std::unordered_map<CacheKey, ObjectCode, CacheKeyHash> bare;
        for (std::uint64_t n = 10000; n < size + 10000; ++n) bare.emplace(key_of(n), code);
        std::vector<double> bare_puts, bare_gets;
        for (int i = 0; i < 10000; ++i) {
            const CacheKey gone = key_of(10000 + i);
            const CacheKey added = key_of(size + 10000 + i);
            bare_puts.push_back(time_us([&] {
                bare.erase(gone);
                bare.emplace(added, code);
            }));
        }
        for (int i = 0; i < 10000; ++i) {
            const CacheKey key = key_of(20000 + random() % size);
            std::optional<ObjectCode> got;
            bare_gets.push_back(time_us([&] {
                if (auto it = bare.find(key); it != bare.end()) got = it->second;
            }));
        }
        if (cache.stats().entries != size || cache.stats().evictions != 10000) {
            std::fprintf(stderr, "disk_cache_scale_bench: memory cache holds %llu entries\n",
                         static_cast<unsigned long long>(cache.stats().entries));
            std::exit(1);
        }
        rows.push_back({size, summarize(puts), summarize(gets), summarize(bare_puts),
                        summarize(bare_gets), -1});
    }
    return rows;
}

}  // namespace

int main(int argc, char** argv) {
    std::uint64_t max_entries = 1'000'000;
    if (const char* value = std::getenv("CUDACORE_SCALE_BENCH_MAX"))
        max_entries = std::stoull(value);
    fs::path folder;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string option = argv[i];
        if (option == "--max") max_entries = std::stoull(argv[i + 1]);
        else if (option == "--dir") folder = argv[i + 1];
        else {
            std::fprintf(stderr, "usage: disk_cache_scale_bench [--max ENTRIES] [--dir FOLDER]\n");
            return 64;
        }
    }
    std::vector<std::uint64_t> sizes;
    for (std::uint64_t size = 1000; size <= max_entries && size <= 1'000'000; size *= 10)
        sizes.push_back(size);
    if (sizes.empty()) sizes.push_back(1000);

    bool remove_folder = false;
    if (folder.empty()) {
        std::string pattern = (fs::temp_directory_path() / "cudacore-scale-XXXXXX").string();
        if (::mkdtemp(pattern.data()) == nullptr) {
            std::perror("mkdtemp");
            return 1;
        }
        folder = fs::path(pattern) / "cache";
        remove_folder = true;
    }
    std::printf("synthetic entries of %zu bytes of code; times per call\n", entry_bytes);
    print_rows("MemoryProgramCache (10,000 puts each evicting one entry, 10,000 gets)",
               memory_tier(sizes), "bare map");
    std::fflush(stdout);
    print_rows(("DiskProgramCache at " + folder.string() +
                " (200 puts of new keys, 500 gets of random keys)").c_str(),
               disk_tier(sizes, folder), "raw");
    if (remove_folder) fs::remove_all(folder.parent_path());
    return 0;
}
