// A C++ compile from a snapshot (headers/compile_snapshot.hpp): in this process, as a cached
// compile's code, and in the compile worker, as the check compile that shows whether that code
// depends on where the project lies or on the clock. Internal.
#pragma once

#include "cudacore/header_bundle.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/program.hpp"
#include "headers/compile_snapshot.hpp"

#include <string>
#include <vector>

namespace cudacore::detail {

// Compiles `program` to `target` from `snapshot` (its source, flags and headers, with the
// program's header bundles), without PCH. The code is NVRTC's for exactly those inputs. Throws
// what Program::compile throws. Not thread-safe on one Program.
ObjectCode compile_from_snapshot(Program& program, CodeType target,
                                 const std::vector<std::string>& name_expressions,
                                 const CompileSnapshot& snapshot, const CancellationToken* cancellation);

// How the compile worker compiles a snapshot again.
struct CheckCompileRequest {
    const CompileSnapshot& snapshot;
    const std::vector<HeaderBundle>& bundles;
    const std::vector<std::string>& name_expressions;
    CodeType target = CodeType::cubin;
    // The clock NVRTC reads moved by check_compile_clock_shift (its __DATE__ and __TIME__ then
    // differ in every field but the century).
    bool move_clock = true;
    // Compiled in another working directory (NVRTC makes relative names absolute against it in
    // line and debug information).
    bool move_working_directory = true;
    // Not null: the worker is stopped within about 10 ms of its cancellation.
    const CancellationToken* cancellation = nullptr;
};

struct CheckCompileResult {
    bool compiled = false;  // NVRTC made code
    std::string code;
    SymbolMap symbols;
    std::string failure;  // why no code came back (a failed compile, a worker that could not run)
    long process_id = 0;  // the worker's: NVRTC writes it into internal names (see same_code_but_unit_ids)
    // Every file NVRTC opened to read during the compile, as it named them: the snapshot gives it
    // the project's headers from memory, so only the toolkit's may be here.
    std::vector<std::string> opened;
    // Every path NVRTC looked up and did not find, as it named them: the toolkit's folders searched
    // in turn, and beside the includer, where a quoted include is looked for first.
    std::vector<std::string> absent;
};

// Whether `a`, made by NVRTC in the process `a_process`, and `b`, made in `b_process`, are the
// same code but for the translation unit id NVRTC writes into internal names. Where a program
// defines no function of external linkage to name the unit after (a program of templates only),
// NVRTC names entities of internal linkage "_INTERNAL_..._<8 hex digits>_<process id>", the hex
// digits made from the time and the working directory: two compiles of the same inputs differ
// there whenever they run in two processes or at two moments, and only there.
bool same_code_but_unit_ids(std::string_view a, long a_process, std::string_view b, long b_process);

// The clock of the check compile runs this far ahead of the real one: 400 days, 13 hours,
// 47 minutes and 31 seconds.
constexpr long long check_compile_clock_shift = 400LL * 86400 + 13 * 3600 + 47 * 60 + 31;

// Runs the check compile in the compile worker (cudacore-compile-worker, found as the link
// worker is, or through $CUDACORE_COMPILE_WORKER). Never throws except std::bad_alloc: a worker
// that cannot be found or started, or that crashes, is a `failure`.
CheckCompileResult run_check_compile(const CheckCompileRequest& request);

// What the worker's executable does for its main, through the functions it defines in place of
// the C library's (time(), stat() and fopen(), which NVRTC calls).
struct CompileWorkerHooks {
    void (*move_clock)(long long seconds);  // moves the clock NVRTC reads
    void (*record_opens)(bool on);          // records the files opened to read, and the lookups, while on
    std::vector<std::string> (*opened)();   // those recorded, in order, each once
    std::vector<std::string> (*absent)();   // the paths looked up and not found meanwhile, each once
};

// The compile worker's main: reads a request on standard input, answers on descriptor 3.
int compile_worker_main(const CompileWorkerHooks& hooks);

}  // namespace cudacore::detail
