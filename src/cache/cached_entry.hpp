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

// One complete entry of compile_cached: the code, the key it is stored under, and for a C++
// program keyed by its headers the header-list entry stored under the source key (cache_key of
// the program). Storing `header_list` under the source key and `code` under `code_key` in
// another cache makes it hold the same entry; a lookup there re-reads the listed headers, so it
// hits only where they have the contents they had here.
struct CachedEntry {
    ObjectCode code;
    CacheKey code_key;
    std::optional<ObjectCode> header_list;  // none for PTX, NVVM IR and options.extra_digest
};

// The entry find_cached(program, ..., options) would find in `cache`, given the program's
// `source_key` (cache_key(program, target, name_expressions)); nullopt when the cache holds no
// complete entry (the code or its header list is missing, or a listed header cannot be read).
// Reads the cache like find_cached (its gets count hits and misses); cache errors are reported
// to options.on_cache_error, not thrown. `search`: the program's search as source_key worked it
// out in this call (cache/project_search.hpp), or null to work it out here.
std::optional<CachedEntry> find_cached_entry(ProgramCache& cache, const Program& program,
                                             const CacheKey& source_key,
                                             const CompileOptions& options = {},
                                             std::shared_ptr<const ProjectSearch> search = nullptr);

// Whether `entry` is a header list (a C++ program's record, stored under its source key) rather
// than code: importers store code before the lists that lead to it.
bool is_header_list(const ObjectCode& entry);

// Forgets the code keys this process remembered for header records, so that the next lookup of
// each keys its record afresh (every header digested, every lookup made again), as another
// process does. For tests of that path; safe at any time.
void forget_remembered_header_keys();

}  // namespace cudacore::detail
