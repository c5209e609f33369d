/// @file
/// CompileOptions: how a compile entry point runs, the one options type of compile_cached,
/// find_cached, compile_many, compile_fatbin and mpi::compile_distributed.
///
/// Every compile entry point takes its arguments in one order: the program (or programs), the
/// target (or targets), the name expressions, then a CompileOptions (and, last, what only that
/// entry point has, such as compile_fatbin's FatbinOptions). A cache reaches a compile one way:
/// CompileOptions::cache.
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
    /// One fork()ed child process per compile (at most `workers` at a time), the ObjectCode sent
    /// back serialized through a pipe. NVRTC's internal locks make its threads scale poorly on some
    /// machines; processes do not share them. The programs' log() and pch_status() are not set.
    /// fork() copies only the calling thread: do not use it while other threads of this process
    /// compile or hold NVRTC (a lock held at fork time stays held in the child). The first miss
    /// compiles in this process (even with one worker), making the automatic PCH; a child uses
    /// automatic PCH only for a program with the first one's options (its name aside) and
    /// leading directives (it then uses the PCH the first one made here); others compile
    /// without PCH in the child, since siblings making PCH files of their own could pick the
    /// same file name.
    /// Each child costs a fork of a process holding NVRTC: on a loaded 2-core machine it added
    /// about 60 ms per small compile and neither strategy scaled, so threads is the default. On
    /// a 16-core host, 64 programs of a <cuda/std> kernel took 1.5 s with processes against
    /// 5.3 s with threads (mpi::compile_distributed at one rank, bench/RESULTS.md);
    /// build/bench/jit_bench (compile_many/16_programs_*) measures both on the machine at hand.
    processes,
};

/// "threads", "processes"; "CompileStrategy(N)" for a value outside the enumeration. Never throws
/// beyond std::bad_alloc.
std::string to_string(CompileStrategy strategy);

/// How a compile entry point runs: through which cache, with which key addition, how cache
/// errors are told, and (for the entry points that compile many programs) by how many workers
/// where. Every field has a default, so `{}` is a plain compile with no cache. The fields are in
/// the order the replaced CompileManyOptions and CachedCompileOptions had them, so their
/// designated initializers still compile.
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
    /// Declares that the code of these programs depends neither on where the project lies nor on
    /// the clock (no __FILE__, assert, line information or __DATE__ / __TIME__ that reaches the
    /// code): a cached compile of C++ then stores its code for every checkout at once, without
    /// the check compile that otherwise shows it (see docs/caching.md, "What a key holds").
    /// Wrongly set, a hit can name another checkout's paths or an earlier time.
    bool paths_and_clock_do_not_matter = false;
    /// Told when the cache could not be read or could not store; empty: a warning
    /// (WarningKind) where the entry point gives one, else nothing.
    CacheWarningHandler on_cache_error{};
    /// Cancels the compiles when cancelled from another thread (cancellation.hpp): they throw
    /// CompileCancelled and nothing is stored in the cache. compile_many and compile_fatbin also
    /// stop their other compiles (in flight and not started) when one fails or is cancelled.
    /// The waits of a cached compile give up too, within about 10 ms of cancel(): the wait for
    /// another thread of this process compiling the same key (that compile goes on), and the
    /// wait for another process holding the key's compile lease
    /// (ProgramCache::await_compile_turn: RemoteProgramCache, alone or as a tier), and the wait
    /// for another process making a header bundle's folder. Then CompileCancelled is thrown,
    /// nothing is stored, and no lease is taken or released. Child processes
    /// (CompileStrategy::processes) are killed within 20 ms, and reaped.
    CancellationToken cancellation{};
};

}  // namespace cudacore
