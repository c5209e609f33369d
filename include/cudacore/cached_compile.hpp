/// @file
/// Compiling through a ProgramCache.
///
/// compile_cached(program, target, names, {.cache = &cache}) returns the cached ObjectCode when
/// the cache holds cache_key(program, target, names) (no NVRTC compile happens), else compiles, stores the
/// result and returns it. Within one process, concurrent calls for the same missing key (on the
/// same cache) compile once: the first caller compiles, the others wait for and share its result
/// or its exception ("single flight"). Across processes, the cache decides
/// (ProgramCache::await_compile_turn): with a RemoteProgramCache (alone or as a tier of a
/// TieredProgramCache) one process compiles a missing key while the others wait for its entry,
/// up to the cache's wait bound; with the process-local and disk caches two processes may
/// compile the same key at once, both store a complete entry and the last one stays.
///
/// A cache that cannot be used never fails the compile: when get() or put() throws CacheError (a
/// full disk, a read-only or foreign directory, a directory where the entry belongs), the code is
/// compiled (or kept) without the cache, the failure is counted by the cache (a disk cache's
/// stats().failed_stores) and handed to `on_cache_error` when one is given, so the caller can warn.
#pragma once

#include "cudacore/cache_key.hpp"
#include "cudacore/compile_options.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/program_cache.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace cudacore {

class Program;

/// The general form: `compile` runs only on a miss, at most once per key at a time in this
/// process. Looks `key` up once (one hit or one miss in `cache`'s stats()), then on a miss asks
/// for the compile turn (ProgramCache::await_compile_turn, whose wait for another process's
/// entry looks again at each check); a call made while another call for the same key and cache
/// is in flight in this process looks up nothing: it waits for and shares that call's outcome.
/// Throws what `compile` throws (to every waiter); cache errors are reported, not thrown.
ObjectCode get_or_compile(ProgramCache& cache, const CacheKey& key,
                          const std::function<ObjectCode()>& compile,
                          const CacheWarningHandler& on_cache_error = {});

/// The options compile_cached() and find_cached() took before CompileOptions.
using CachedCompileOptions [[deprecated("use CompileOptions")]] = CompileOptions;

/// program.compile(target, name_expressions) through `options.cache` (with no cache, just
/// program.compile). `program` is compiled only on a miss (its log() is then that compile's log;
/// on a hit it is left as it was). Throws what Program::compile and cache_key throw; cache errors
/// are reported to options.on_cache_error, not thrown. options.workers, strategy and
/// first_alone_for_pch do not apply. Thread-safe (concurrent calls for one key compile once, see
/// above); `program` must not be compiled elsewhere meanwhile.
///
/// Headers: a hit is exact by construction. A C++ program's headers outside the toolkit are read
/// once and handed to NVRTC from memory, and the key is made of exactly what NVRTC is given (the
/// rewritten source, each header's bytes, the flags, the toolkit's headers it reaches): no edit
/// or race can come between the bytes hashed and the bytes compiled, and a lookup reads the same
/// headers' bytes again (not their stamps). A miss also compiles the same inputs in the compile
/// worker with the project folder spelled otherwise, in another working directory and with the
/// clock moved: the code is stored for every checkout when it comes out the same, for this
/// project folder only when it names a path, and not at all when it depends on the clock
/// (options.paths_and_clock_do_not_matter skips that check). What cannot be given from memory (a
/// header named by a macro, \#include_next in a project header, one file under two names, a
/// project header shadowing a toolkit header, fdevice_time_trace) is compiled from the files and
/// returned but NOT stored, with a WarningKind::not_cached warning saying why. With
/// options.extra_digest set, headers are not tracked and the key is cache_key plus that digest.
/// PTX and NVVM IR programs include nothing and are keyed by cache_key alone. See
/// docs/caching.md, "Exact keys".
ObjectCode compile_cached(Program& program, CodeType target,
                          const std::vector<std::string>& name_expressions = {},
                          const CompileOptions& options = {});

/// What compile_cached(program, target, name_expressions, options) would return from
/// options.cache, without ever compiling: the same keys (headers read again, or
/// options.extra_digest), nullopt on a miss (also when a header changed since). For a
/// process that must only use code another one compiled. Cache errors are reported to
/// options.on_cache_error (a miss), not thrown; throws what cache_key throws, and
/// InvalidArgumentError when options.cache is null. Thread-safe.
std::optional<ObjectCode> find_cached(const Program& program, CodeType target,
                                      const std::vector<std::string>& name_expressions = {},
                                      const CompileOptions& options = {});

/// The earlier form with the cache first.
[[deprecated("use compile_cached(program, target, name_expressions, {.cache = &cache})")]]
inline ObjectCode compile_cached(ProgramCache& cache, Program& program, CodeType target,
                                 const std::vector<std::string>& name_expressions = {},
                                 CompileOptions options = {}) {
    options.cache = &cache;
    return compile_cached(program, target, name_expressions, options);
}

/// The earlier form with the cache first and only a cache-error handler.
[[deprecated("use compile_cached(program, target, name_expressions, {.cache = &cache, .on_cache_error = "
             "handler})")]]
inline ObjectCode compile_cached(ProgramCache& cache, Program& program, CodeType target,
                                 const std::vector<std::string>& name_expressions,
                                 const CacheWarningHandler& on_cache_error) {
    CompileOptions options;
    options.cache = &cache;
    options.on_cache_error = on_cache_error;
    return compile_cached(program, target, name_expressions, options);
}

/// The earlier form with the cache first.
[[deprecated("use find_cached(program, target, name_expressions, {.cache = &cache})")]]
inline std::optional<ObjectCode> find_cached(ProgramCache& cache, const Program& program, CodeType target,
                                             const std::vector<std::string>& name_expressions = {},
                                             CompileOptions options = {}) {
    options.cache = &cache;
    return find_cached(program, target, name_expressions, options);
}

}  // namespace cudacore
