// Where compile_cached keeps a program's code in a cache, for callers that copy entries from one
// cache to another (cudacore::mpi::compile_distributed stores the code other ranks compiled
// exactly as their compile_cached stored it). The key logic stays in cached_compile.cpp.
#pragma once

#include "cudacore/cache_key.hpp"
#include "cudacore/cached_compile.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/program_cache.hpp"

#include <memory>
#include <optional>

namespace cudacore {
class Program;
}

namespace cudacore::detail {

struct ProjectSearch;

// One complete entry of compile_cached: the code, the key it is stored under, and for C++ code
// that depends on where the project lies the program's first key, under which a marker leads to
// it (code/code_keys.hpp). Storing detail::path_bound_marker() under `marker_key` and `code`
// under `code_key` in another cache makes it hold the same entry.
struct CachedEntry {
    ObjectCode code;
    CacheKey code_key;
    std::optional<CacheKey> marker_key;  // none for code under its first key, PTX, NVVM IR, extra_digest
};

// The entry find_cached(program, target, ..., options) would find in `cache`, given the program's
// `source_key` (cache_key(program, target, name_expressions)); nullopt when the cache holds no
// complete entry. Reads the files the program includes (each once) and the cache like
// find_cached (its gets count hits and misses); cache errors are reported to
// options.on_cache_error, not thrown. `search`: the program's search as source_key worked it out
// in this call (code/project_search.hpp), or null to work it out here.
std::optional<CachedEntry> find_cached_entry(ProgramCache& cache, const Program& program, CodeType target,
                                             const CacheKey& source_key,
                                             const CompileOptions& options = {},
                                             std::shared_ptr<const ProjectSearch> search = nullptr);

// Whether `entry` is a marker that leads to code stored under another key, rather than code:
// importers store code before the markers that lead to it.
bool leads_to_other_entry(const ObjectCode& entry);

}  // namespace cudacore::detail
