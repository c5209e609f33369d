// The compile a program cache keeps: a C++ program compiled from its snapshot (code_keys.hpp), with
// the check compiles that show under which key its code may be stored (docs/caching.md, "What a
// key holds"). The cache stores what this says; it asks the Program nothing else. Internal.
#pragma once

#include "code/code_keys.hpp"
#include "code/snapshot_compile.hpp"
#include "cudacore/cancellation.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/program.hpp"

#include <string>
#include <vector>

namespace cudacore::detail {

// Under which key a checked compile's code may be stored.
enum class StoredUnder {
    first_key,   // the same code under other spellings of the folders, elsewhere, at another time
    path_bound,  // the same code at another time only: CodeKeys::path_bound, with a marker at the first
    nowhere,     // not cached: `why` says why (the clock, a check that could not run, two names)
};

struct CheckedCompile {
    ObjectCode code;
    StoredUnder stored_under = StoredUnder::nowhere;
    std::string why;  // for `nowhere`: "its code depends on the clock ..."
};

// Why what a check compile of `moved` looked up on disk leaves its code out of every key, or empty.
// Found or read (check.opened), it may meet only the toolkit's files the scan reached
// (CompileSnapshot::toolkit_files, whose bytes the key holds), each under a name that no project
// include folder holds (`unmoved`'s project_include_folders, looked up now: an angled include the scan
// missed would find that one in a compile from the files), the source's name, and the kernel's
// files (/proc, /sys, /dev). Not found (check.absent), nothing where a quoted include of the
// project's text is looked for first (looked_up_beside_project_text). Thread-safe.
std::string read_outside_snapshot(const CheckCompileResult& check, const CompileSnapshot& moved,
                                  const CompileSnapshot& unmoved);

// Compiles `program` to `target` from `keys.snapshot` in this process, beside the check compile
// in the compile worker (the folders spelled otherwise, another working directory, the clock
// moved; then the clock alone moved where that differs), and says where the code may be stored.
// `declared`: the caller says paths and the clock do not matter (no check; first_key). Where
// one file has two names (keys.snapshot.aliased), the code is kept only if a compile from the
// files agrees. The code returned is NVRTC's for the snapshot (or the unmoved worker compile's,
// where the check ran in a process whose id has another number of digits). Throws what
// Program::compile throws, and CompileCancelled when `cancellation` is cancelled. Not thread-safe
// on one Program.
CheckedCompile compile_checked(Program& program, CodeType target, const std::vector<std::string>& name_expressions,
                               const CodeKeys& keys, bool declared, const CancellationToken& cancellation);

}  // namespace cudacore::detail
