/// @file
/// compile_many: many programs (or many sets of name expressions of one source) compiled at once,
/// by a pool of workers, through a ProgramCache when one is given (only the misses compile).
///
/// For many specializations of ONE source, the fastest path is usually a single Program::compile
/// with all the name expressions: one NVRTC run parses the headers once. compile_many is for
/// separate programs (each its own ObjectCode), and runs them in parallel.
///
/// With automatic PCH on (the default), the first program to compile runs alone, then the rest
/// in parallel: later programs with the same leading \#includes and options use the PCH it made
/// instead of each making their own.
#pragma once

#include "cudacore/object_code.hpp"
#include "cudacore/program.hpp"
#include "cudacore/program_cache.hpp"

#include <string>
#include <vector>

namespace cudacore {

/// Where compile_many() runs the compiles.
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

/// Options of compile_many(): workers, strategy, cache.
struct CompileManyOptions {
    CompileStrategy strategy = CompileStrategy::threads;  ///< threads (default) or processes
    /// Compiles at once; 0: std::thread::hardware_concurrency().
    unsigned workers = 0;
    /// Looked up first, exactly as find_cached does (the headers read and every place looked for
    /// a header are checked); with the threads strategy, misses are compiled through
    /// compile_cached and stored. With the processes strategy, misses compiled in a child are not
    /// stored: the record of where the compile looked for headers is made by the compiling
    /// process. Not owned.
    ProgramCache* cache = nullptr;
    /// Compile the first miss alone when it uses automatic PCH (see above): with threads when
    /// there are several workers, with processes always (in this process, so that the children
    /// inherit its PCH).
    bool first_alone_for_pch = true;
};

/// programs[i].compile(target, name_expressions[i]) for every i (name_expressions empty, or one
/// list per program), returned in order. On failure, throws the error of the lowest-numbered
/// program that failed (a CompileError carries its log) after the compiles in flight finish;
/// programs not yet started then are skipped. Throws InvalidArgumentError when name_expressions
/// has another size, CacheError from the cache, SerializationError or Error when a child process
/// fails (processes). Programs must not be compiled elsewhere meanwhile.
std::vector<ObjectCode> compile_many(std::vector<Program>& programs, CodeType target,
                                     const std::vector<std::vector<std::string>>& name_expressions = {},
                                     const CompileManyOptions& many = {});

/// One Program per list, all of `source` with `options`, each compiled with its name expressions.
std::vector<ObjectCode> compile_many(const std::string& source,
                                     const std::vector<std::vector<std::string>>& name_expressions,
                                     CodeType target, const ProgramOptions& options,
                                     const CompileManyOptions& many = {});

}  // namespace cudacore
