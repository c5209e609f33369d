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

// program.compile(target, name_expressions) through `cache`. `program` is compiled only on a
// miss (its log() is then that compile's log; on a hit it is left as it was). Throws what
// Program::compile and cache_key throw, and CacheError from the cache.
ObjectCode compile_cached(ProgramCache& cache, Program& program, CodeType target,
                          const std::vector<std::string>& name_expressions = {});

}  // namespace cudacore
