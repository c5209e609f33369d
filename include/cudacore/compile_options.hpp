/// @file
/// CompileOptions: how a compile entry point runs, the one options type of compile_cached,
/// find_cached, compile_many, compile_fatbin and mpi::compile_distributed. Every entry point
/// takes the program(s), the target(s), the name expressions, then a CompileOptions; a cache
/// reaches a compile only through CompileOptions::cache.
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

/// Told (on the compiling thread) when a cache could not be read or could not store; what it
/// throws is ignored.
using CacheWarningHandler = std::function<void(const CacheError&)>;

/// Where compile_many() (and compile_fatbin, mpi::compile_distributed) run the compiles.
enum class CompileStrategy {
    /// Worker threads in this process. Each Program's log() and pch_status() are set as by
    /// Program::compile. Safe alongside other threads.
    threads,
    /// One fork()ed child per compile (at most `workers` at a time), the code sent back through a
    /// pipe; logs and pch_status() are not set. Do not use while other threads compile. Faster on
    /// many cores, slower on few (docs/caching.md, "Compiling in processes").
    processes,
};

/// "threads", "processes"; "CompileStrategy(N)" for a value outside the enumeration. Never throws
/// beyond std::bad_alloc.
std::string to_string(CompileStrategy strategy);

/// How a compile entry point runs: the cache, the key addition, how cache errors are told, and
/// the workers of the entry points that compile many programs. `{}`: a plain compile, no cache.
struct CompileOptions {
    /// Where many compiles run (compile_many, compile_fatbin, mpi::compile_distributed).
    CompileStrategy strategy = CompileStrategy::threads;
    /// Compiles at once (per rank for mpi::compile_distributed); 0: one per core this process
    /// may run on. Ignored by compile_cached and find_cached.
    unsigned workers = 0;
    /// Looked up before compiling and given what compiles (a miss): a hit is exact, see
    /// compile_cached. Not owned: it must outlive the call. Null: no cache (compile_cached then
    /// compiles as Program::compile does; find_cached throws InvalidArgumentError).
    ProgramCache* cache = nullptr;
    /// Compile the first miss alone when it uses automatic PCH, so that the rest use its PCH
    /// (compile_many: with threads when there are several workers, with processes always).
    bool first_alone_for_pch = true;
    /// Stands for everything the source includes: when not empty it goes into the key and the
    /// headers are not tracked (the caller promises it changes whenever a header does, e.g. a
    /// digest of its header tree or a release version).
    std::string extra_digest{};
    /// Declares that the code depends neither on the project's path nor on the clock (no
    /// __FILE__, assert, line information, __DATE__): a cached C++ compile then stores for every
    /// checkout at once, without the check compile (docs/caching.md, "What a key holds"). Wrongly
    /// set, a hit can name another checkout's paths or an earlier time.
    bool paths_and_clock_do_not_matter = false;
    /// Told when the cache could not be read or could not store; empty: a warning
    /// (WarningKind) where the entry point gives one, else nothing.
    CacheWarningHandler on_cache_error{};
    /// Cancels the compiles when cancelled from another thread (cancellation.hpp): they throw
    /// CompileCancelled and store nothing; compile_many and compile_fatbin stop their other
    /// compiles too (child processes killed within 20 ms and reaped), and a cached compile's waits
    /// (the same key elsewhere in this process, a remote lease, a header bundle's or the standard
    /// headers' folder) give up within about 10 ms.
    CancellationToken cancellation{};
};

}  // namespace cudacore
