/// @file
/// Compiling through a ProgramCache: compile_cached returns the cached ObjectCode on a hit, else
/// compiles, stores and returns it; concurrent calls for one missing key compile once. A cache
/// that cannot be used never fails the compile: the error is counted and handed to
/// `on_cache_error`. Guide: docs/caching.md.
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

/// The general form: `compile` runs only on a miss, once per key at a time in this process (other
/// calls wait and share its outcome, thrown errors included); across processes the cache decides.
ObjectCode get_or_compile(ProgramCache& cache, const CacheKey& key,
                          const std::function<ObjectCode()>& compile,
                          const CacheWarningHandler& on_cache_error = {});

/// The options compile_cached() and find_cached() took before CompileOptions.
using CachedCompileOptions [[deprecated("use CompileOptions")]] = CompileOptions;

/// program.compile(target, name_expressions) through `options.cache`, compiling only on a miss;
/// the key is exactly what NVRTC is given, headers included. A hit is named as `program` and
/// compiles nothing, so program.log() holds no compiler log for it. Throws what Program::compile
/// and cache_key throw. Thread-safe; `program` must not be compiled elsewhere meanwhile.
ObjectCode compile_cached(Program& program, CodeType target,
                          const std::vector<std::string>& name_expressions = {},
                          const CompileOptions& options = {});

/// What compile_cached would return from options.cache, never compiling; InvalidArgumentError for
/// a null cache, and what cache_key throws. Thread-safe.
std::optional<ObjectCode> find_cached(const Program& program, CodeType target,
                                      const std::vector<std::string>& name_expressions = {},
                                      const CompileOptions& options = {});

/// Deprecated form with the cache first.
[[deprecated("use compile_cached(program, target, name_expressions, {.cache = &cache})")]]
ObjectCode compile_cached(ProgramCache& cache, Program& program, CodeType target,
                          const std::vector<std::string>& name_expressions = {},
                          CompileOptions options = {});

/// Deprecated form with the cache first and only a cache-error handler.
[[deprecated("use compile_cached(program, target, name_expressions, {.cache = &cache, .on_cache_error = "
             "handler})")]]
ObjectCode compile_cached(ProgramCache& cache, Program& program, CodeType target,
                          const std::vector<std::string>& name_expressions,
                          const CacheWarningHandler& on_cache_error);

/// Deprecated form with the cache first.
[[deprecated("use find_cached(program, target, name_expressions, {.cache = &cache})")]]
std::optional<ObjectCode> find_cached(ProgramCache& cache, const Program& program, CodeType target,
                                      const std::vector<std::string>& name_expressions = {},
                                      CompileOptions options = {});

}  // namespace cudacore
