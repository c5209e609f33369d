// The keys of a C++ program's code, made from what NVRTC is given (headers/compile_snapshot.hpp):
// the source, each project header's bytes as read once, the flags, the toolkit's files, the name
// expressions. A hit is the code of those inputs by construction. Internal.
//
// Two keys, because code may or may not depend on where the project lies:
// - the first key names the project folder and the standard headers' folder by placeholders, so
//   two checkouts of one project at different paths share it. Code is stored under it only when
//   the check compile (code/snapshot_compile.hpp: the same inputs under other spellings of those
//   folders, another working directory and a moved clock) gave the same bytes, or the caller
//   declared that paths and the clock do not matter;
// - code that depends on the folders (assert, __FILE__, line information) is stored under the
//   path-bound key, which adds the folders and the working directory, and the first key holds a
//   marker that leads there. Code that depends on the clock is not stored.
#pragma once

#include "code/project_search.hpp"
#include "cudacore/cache_key.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/program.hpp"
#include "headers/compile_snapshot.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cudacore::detail {

struct CodeKeys {
    CompileSnapshot snapshot;  // `refusal` set: no key (compiled from the files, not cached)
    CacheKey first;
    // Where code that depends on the folders is stored: `first` extended by the folders and the
    // working directory (a marker under `first` leads there).
    CacheKey path_bound;
    // The folders the placeholders of `first` stand for, as respelled() takes them.
    std::vector<Respelling> folders;
    std::string working_directory;
};

// The snapshot of `program` compiled with `flags` (Program::flags for the target) now and its
// first key, made from `source_key` (cache_key of the program) and the snapshot. `search`: the
// program's (project_search). Never throws except std::bad_alloc.
CodeKeys code_keys(const Program& program, const std::vector<std::string>& flags, const CacheKey& source_key,
                   const ProjectSearch& search);

// The first key of `program` compiled to `target` with `name_expressions`, where the Program
// remembers both its source key and that first key for the context now: what a hit looks up,
// without hashing or reading a file. nullopt otherwise (also where the context cannot be read).
// Where it gives a key, the program's debug source file is written first where it has one
// (Program::write_debug_source: the code names it). Throws what write_debug_source throws.
std::optional<CacheKey> remembered_lookup_key(const Program& program, CodeType target,
                                              const std::vector<std::string>& name_expressions);

// `base` extended by a `tag` and named fields (length-prefixed, so that no two run together):
// the key of an entry that follows from another key.
CacheKey extend_key(const CacheKey& base, std::string_view tag,
                    const std::vector<std::pair<std::string, std::string>>& fields);

// Everything a program cache keys `program` compiled to `target` by, worked out in one call, so
// that the cache asks the Program nothing else.
struct ProgramKeys {
    SourceKey source;              // cache_key(program, target, names): the compile lease's key
    CacheKey lookup;               // where its code is looked for first
    std::optional<CodeKeys> code;  // a C++ program without an extra digest: its snapshot and keys
    // What messages and CompileCancelled name: the program's name, its flags, its backend.
    std::string name;
    std::vector<std::string> flags;
    std::string backend;
};

// The keys of `program` compiled to `target` with `name_expressions` now (its files read once),
// or given its source key (cache_key of the same arguments). `extra_digest`: the caller's
// (CompileOptions::extra_digest), which keys the code by the bytes alone. Writes the program's
// debug source file where it has one (Program::write_debug_source: code from a cache names it).
// Throws what cache_key and write_debug_source throw.
ProgramKeys program_keys(const Program& program, CodeType target, const std::vector<std::string>& name_expressions,
                         std::string_view extra_digest);
ProgramKeys program_keys(const Program& program, CodeType target, SourceKey source, std::string_view extra_digest);

// The entry stored under the first key of code that depends on the folders.
ObjectCode path_bound_marker();
bool is_path_bound_marker(const ObjectCode& entry);

}  // namespace cudacore::detail
