// Side by side, cache (no GPU needed): memory and disk cache hits through compile_cached.
// cudacore only: the raw calls have no cache (cuda.core's and CuPy's are in cache.py).
#include "side_by_side/areas.hpp"

#include "cudacore/cached_compile.hpp"
#include "cudacore/disk_program_cache.hpp"
#include "cudacore/memory_program_cache.hpp"
#include "cudacore/program.hpp"

#include <stdexcept>

namespace cudacore::bench::side_by_side {

// A hit computes the key (the canonical flags and a SHA-256 of source and flags) and, on disk,
// reads and checks a file.
void cache_hit_operations(Runner& runner, const std::string& arch, const KernelSource& kernel,
                          const std::filesystem::path& cache_dir) {
    const ProgramOptions options = options_for(arch, "side_by_side_" + kernel.label + ".cu");
    MemoryProgramCache memory_cache;
    DiskProgramCache disk_cache(cache_dir);
    Program program(kernel.source, SourceType::cxx, options);
    const std::vector<std::string>& names = kernel.name_expressions;
    auto hit = [&](ProgramCache* cache_pointer) {
        return [&, cache_pointer] {
            ProgramCache& cache = *cache_pointer;
            constexpr int batch = 10;
            // A C++ program's hit reads two entries (its header list, then the code keyed by
            // those headers' digests): every lookup must hit, none may miss or store.
            const CacheStats before = cache.stats();
            const double ns = nanoseconds([&] {
                for (int i = 0; i < batch; ++i) compile_cached(program, CodeType::cubin, names, {.cache = &cache});
            });
            const CacheStats after = cache.stats();
            if (after.misses != before.misses || after.insertions != before.insertions ||
                after.hits < before.hits + batch)
                throw std::runtime_error("a lookup missed the cache");
            return ns / batch;
        };
    };
    const bool want_memory = runner.wanted("memory_cache_hit_" + kernel.label);
    const bool want_disk = runner.wanted("disk_cache_hit_" + kernel.label);
    if (want_memory) compile_cached(program, CodeType::cubin, names, {.cache = &memory_cache});  // fill
    if (want_disk) compile_cached(program, CodeType::cubin, names, {.cache = &disk_cache});
    runner.compare("memory_cache_hit_" + kernel.label, {20, 300},
                   {{"cudacore", hit(&memory_cache), "MemoryProgramCache via compile_cached"}});
    runner.compare("disk_cache_hit_" + kernel.label, {20, 300},
                   {{"cudacore", hit(&disk_cache),
                     "DiskProgramCache via compile_cached (file in the page cache)"}});
}

}  // namespace cudacore::bench::side_by_side
