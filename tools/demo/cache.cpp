// `cudacore demo`: The cache steps: compile_cached through a DiskProgramCache in a scratch folder (a miss, then a
// hit), then that folder exported to one artefact file and imported into a fresh one.
#include "demo.hpp"

#include "cudacore/cache_activity.hpp"
#include "cudacore/cache_artefact.hpp"
#include "cudacore/cached_compile.hpp"
#include "cudacore/disk_program_cache.hpp"
#include "cudacore/program.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>

namespace cudacore::cli::demo {

void step_cache(Demo& demo) {
    std::printf("== cache (compile_cached through a DiskProgramCache)\n");
    const fs::path directory = demo.scratch_path() / "cache";
    DiskProgramCache cache(directory);
    std::printf("fresh cache directory %s (removed at the end)\n", directory.c_str());

    ProgramOptions options;
    options.arch = demo.arch;
    options.name = "saxpy";
    Program program(kSaxpySource, SourceType::cxx, options);

    // What one compile_cached call was, told by the cache's own counters: a miss stores the
    // code without a hit (lookups happen twice before compiling, so misses may grow by more
    // than one); a hit stores nothing and counts no miss (one hit: the code, under its key).
    auto timed_call = [&](CacheStats& before) {
        const auto start = std::chrono::steady_clock::now();
        ObjectCode code = compile_cached(program, CodeType::cubin, {}, {.cache = &cache});
        const double ms = milliseconds_since(start);
        const CacheStats after = cache.stats();
        const std::uint64_t hits = after.hits - before.hits, misses = after.misses - before.misses,
                            stored = after.insertions - before.insertions;
        before = after;
        const char* kind = hits == 0 && misses > 0 && stored >= 1   ? "miss"
                           : hits >= 1 && misses == 0 && stored == 0 ? "hit"
                                                                     : "neither hit nor miss";
        return std::make_tuple(std::move(code), ms, std::string(kind));
    };
    CacheStats stats = cache.stats();
    auto [miss, miss_ms, first] = timed_call(stats);
    std::printf("first call: %s in %.1f ms (cache now %llu entry, %llu bytes on disk)\n",
                first.c_str(), miss_ms,
                static_cast<unsigned long long>(stats.entries),
                static_cast<unsigned long long>(stats.bytes));
    auto [hit, hit_ms, second] = timed_call(stats);
    std::printf("second call: %s in %.2f ms; speed-up %.0fx\n", second.c_str(), hit_ms,
                miss_ms / std::max(hit_ms, 1e-6));
    // The cache's code is the code a plain compile gives, byte for byte (the headers a miss
    // reads are learned by a front-end pass of their own, never by a flag on this compile).
    Program plain_program(kSaxpySource, SourceType::cxx, options);
    const ObjectCode plain = plain_program.compile(CodeType::cubin);
    const bool ok = first == "miss" && second == "hit" && hit == miss && hit.code() == plain.code();
    std::printf("miss then hit, hit == miss == a plain compile (bytes, %zu): %s\n", hit.size(),
                demo.outcomes.verify("cache", ok));
}

// The cache step's folder as one artefact file, imported into a fresh folder as an application
// ships its warmed cache: the program is found there without a compile.
void step_cache_artefact(Demo& demo) {
    std::printf("== cache artefact (export_cache_artefact, import_cache_artefact)\n");
    const fs::path artefact = demo.scratch_path() / "warm.ccart";
    DiskProgramCache warmed(demo.scratch_path() / "cache");
    const CacheArtefactExport exported = export_cache_artefact(artefact, warmed);
    std::printf("exported %llu entries of the cache step's folder: %llu bytes\n",
                static_cast<unsigned long long>(exported.entries),
                static_cast<unsigned long long>(exported.bytes));
    DiskProgramCache fresh(demo.scratch_path() / "cache-imported");
    const auto start = std::chrono::steady_clock::now();
    const CacheArtefactImport imported = import_cache_artefact(fresh, artefact);
    std::printf("imported %llu entries into a fresh folder in %.2f ms (made with NVRTC %s)\n",
                static_cast<unsigned long long>(imported.imported), milliseconds_since(start),
                imported.origin.nvrtc_version.c_str());

    ProgramOptions options;
    options.arch = demo.arch;
    options.name = "saxpy";
    Program program(kSaxpySource, SourceType::cxx, options);
    const std::uint64_t compiles_before = cache_stats().compiles;
    const ObjectCode code = compile_cached(program, CodeType::cubin, {}, {.cache = &fresh});
    const std::uint64_t compiles = cache_stats().compiles - compiles_before;
    const std::optional<ObjectCode> original = find_cached(program, CodeType::cubin, {}, {.cache = &warmed});
    const bool ok = imported.imported == exported.entries && exported.entries > 0 && compiles == 0 &&
                    original && *original == code;
    std::printf("compile_cached with the imported cache: NVRTC called %llu times, code == the "
                "exported code: %s\n",
                static_cast<unsigned long long>(compiles), demo.outcomes.verify("cache artefact", ok));
}

}  // namespace cudacore::cli::demo
