/// @file
/// CompileOptions: how a compile entry point runs, the one options type of compile_cached,
/// find_cached, compile_many, compile_fatbin and mpi::compile_distributed (each takes the
/// program(s), the target(s), the name expressions, then a CompileOptions).
///
///     compile_cached(program, CodeType::cubin, {"scale<float>"}, {.cache = &cache});
///     compile_many(programs, CodeType::cubin, {}, {.workers = 4, .cache = &cache});
#pragma once

#include "cudacore/cancellation.hpp"

#include <functional>
#include <string>

namespace cudacore {

class CacheError;
class ProgramCache;

/// Told (on the compiling thread) when a cache could not be read or store; its throws are ignored.
using CacheWarningHandler = std::function<void(const CacheError&)>;

/// Where compile_many(), compile_fatbin and mpi::compile_distributed run the compiles.
enum class CompileStrategy {
    /// Worker threads in this process; each Program's log() and pch_status() are set.
    threads,
    /// One fork()ed child per compile, logs and pch_status() not set; not while other threads
    /// compile (docs/caching.md, "Compiling in processes").
    processes,
};

/// "threads", "processes"; "CompileStrategy(N)" for other values.
std::string to_string(CompileStrategy strategy);

/// How a compile entry point runs. `{}`: a plain compile, no cache.
struct CompileOptions {
    CompileStrategy strategy = CompileStrategy::threads;  ///< where many compiles run
    /// Compiles at once (per MPI rank); 0: one per core. Ignored by compile_cached, find_cached.
    unsigned workers = 0;
    /// Looked up before compiling and given what compiles; not owned, it must outlive the call.
    /// Null: no cache (find_cached throws InvalidArgumentError).
    ProgramCache* cache = nullptr;
    /// Compile the first miss alone when it uses automatic PCH, so that the rest use its PCH.
    bool first_alone_for_pch = true;
    /// Stands for everything the source includes: when not empty it goes into the key and headers
    /// are not tracked (the caller changes it whenever a header changes).
    std::string extra_digest{};
    /// Declares that the code depends neither on the project's path nor on the clock, so a cached
    /// C++ compile stores for every checkout at once (docs/caching.md, "What a key holds").
    bool paths_and_clock_do_not_matter = false;
    /// Told when the cache could not be read or store; empty: the entry point's warning.
    CacheWarningHandler on_cache_error{};
    /// Cancels the compiles (cancellation.hpp): they throw CompileCancelled and store nothing, and
    /// the other compiles and waits of the call end too (docs/caching.md).
    CancellationToken cancellation{};
};

}  // namespace cudacore
