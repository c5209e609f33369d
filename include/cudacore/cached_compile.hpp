// Compiling through a ProgramCache.
//
// compile_cached(cache, program, target, names) returns the cached ObjectCode when the cache
// holds cache_key(program, target, names) (no NVRTC compile happens), else compiles, stores the
// result and returns it. Within one process, concurrent calls for the same missing key (on the
// same cache) compile once: the first caller compiles, the others wait for and share its result
// or its exception ("single flight"). Across processes, two may compile the same key at once;
// both store a complete entry and the last one stays.
#pragma once

#include "cudacore/cache_key.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/program_cache.hpp"

#include <functional>
#include <string>
#include <vector>

namespace cudacore {

class Program;

// The general form: `compile` runs only on a miss, at most once per key at a time in this
// process. Throws what `compile` throws (to every waiter), and CacheError from the cache.
ObjectCode get_or_compile(ProgramCache& cache, const CacheKey& key,
                          const std::function<ObjectCode()>& compile);

struct CachedCompileOptions {
    // Stands for everything the source includes: when not empty it goes into the key and the
    // headers are not tracked (the caller promises it changes whenever a header does, e.g. a
    // digest of its header tree or a release version).
    std::string extra_digest;
};

// program.compile(target, name_expressions) through `cache`. `program` is compiled only on a
// miss (its log() is then that compile's log; on a hit it is left as it was). Throws what
// Program::compile and cache_key throw, and CacheError from the cache.
//
// Headers: the key of a C++ program covers the contents of every header the compile actually
// read (NVRTC reports them; see Program::compile with headers_read), so editing an included
// header gives a miss and new code, never stale code. The cache then holds two entries per
// program: the list of headers under cache_key(program, ...) and the code under a key that adds
// each header's path and SHA-256 (stats count both). A lookup re-reads the listed headers
// (digests of files unchanged since the last look, by size, mtime and inode, are remembered in
// this process). With options.extra_digest set, headers are not tracked and the key is
// cache_key plus that digest. Where neither is possible (fdevice_time_trace is set, or a header
// cannot be read back) the code is compiled and returned but NOT stored, and a
// WarningKind::not_cached warning says why (warnings.hpp). A header edited while the compile
// runs may be keyed by its new contents: do not edit headers during a compile. PTX programs
// include nothing and are keyed by cache_key alone.
ObjectCode compile_cached(ProgramCache& cache, Program& program, CodeType target,
                          const std::vector<std::string>& name_expressions = {},
                          const CachedCompileOptions& options = {});

}  // namespace cudacore
