// `cudacore cache stats|clear|prune --max-bytes N`: look after the program cache on disk.
#include "commands.hpp"

#include "cudacore/disk_program_cache.hpp"
#include "cudacore/errors.hpp"

#include <cstdio>
#include <memory>

namespace cudacore::cli {

namespace {

struct CacheArgs {
    std::string directory;  // empty: the default location
    std::uint64_t max_bytes = 0;
};

DiskProgramCache open_cache(const CacheArgs& args) {
    return DiskProgramCache(args.directory.empty() ? default_cache_directory()
                                                   : std::filesystem::path(args.directory));
}

void print_stats(const CacheArgs& args) {
    DiskProgramCache cache = open_cache(args);
    const CacheStats stats = cache.stats();
    std::printf("directory  %s\n", cache.directory().c_str());
    std::printf("entries    %llu\n", static_cast<unsigned long long>(stats.entries));
    std::printf("bytes      %llu\n", static_cast<unsigned long long>(stats.bytes));
    std::printf("max bytes  %llu (evicted least recently used first)\n",
                static_cast<unsigned long long>(stats.max_bytes));
    if (cache_disabled_by_environment()) std::printf("disabled   yes (CUDACORE_DISABLE_CACHE)\n");
}

}  // namespace

void add_cache_command(CLI::App& app) {
    auto* command = app.add_subcommand("cache", "Show, clear or prune the program cache on disk");
    command->require_subcommand(1);
    auto args = std::make_shared<CacheArgs>();
    command->add_option("--dir", args->directory,
                        "Cache directory (default: $CUDACORE_CACHE_DIR, else "
                        "$XDG_CACHE_HOME/cudacore, else ~/.cache/cudacore)");

    command->add_subcommand("stats", "Where the cache is, how many entries and bytes it holds")
        ->callback([args] { print_stats(*args); });
    command->add_subcommand("clear", "Remove every entry")->callback([args] {
        DiskProgramCache cache = open_cache(*args);
        const std::uint64_t entries = cache.stats().entries;
        cache.clear();
        std::printf("removed %llu entries from %s\n", static_cast<unsigned long long>(entries),
                    cache.directory().c_str());
    });
    auto* prune = command->add_subcommand(
        "prune", "Remove least recently used entries until the cache holds at most --max-bytes");
    prune->add_option("--max-bytes", args->max_bytes, "The size to shrink the cache to")->required();
    prune->callback([args] {
        DiskProgramCache cache = open_cache(*args);
        const std::uint64_t removed = cache.prune(args->max_bytes);
        const CacheStats stats = cache.stats();
        std::printf("removed %llu entries; %llu entries, %llu bytes remain\n",
                    static_cast<unsigned long long>(removed),
                    static_cast<unsigned long long>(stats.entries),
                    static_cast<unsigned long long>(stats.bytes));
    });
}

}  // namespace cudacore::cli
