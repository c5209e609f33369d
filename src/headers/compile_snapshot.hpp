// What NVRTC is given for a cached C++ compile: the source, every header of the project read once
// and handed to NVRTC from memory, and flags whose only include folders are the toolkit's. The
// bytes a cache key is made from are the bytes NVRTC compiles, by construction: no stamp, clock
// or race can separate them. Internal.
//
// Each #include, #import and __has_include of the source and of a project header is resolved
// here as NVRTC resolves it (a quoted name beside the including file first, then the include
// folders in order; a pre-include in the working directory first) and its operand rewritten:
// - a project header becomes an in-memory header with a name under /proc/self/ (a folder nobody
//   can create files in, so a quoted directive of a header that this scan missed finds nothing
//   beside it; an absolute name, or one in the source, still could: the scan reads the text as
//   NVRTC does under the program's --std), its text
//   opened by `#line 1 "<the path NVRTC would have spelled>"`, so that __FILE__, assert and line
//   information name what a compile from the files names;
// - a header of the toolkit keeps its name, in <> (NVRTC finds it in the toolkit's folders, the
//   only ones it is given), and a name found nowhere keeps its name, in <> (NVRTC's built-in
//   headers), so that NVRTC never looks in a project folder.
// What cannot be given this way is refused (`refusal` says why; the caller compiles from the
// files and does not cache): a name a macro makes in a project file, #include_next in one, a
// project header a toolkit header's include would find (it shadows the toolkit's own), a digit
// separator whose reading decides what the scan finds, a header holding a NUL byte or on a path a
// #line cannot carry, a bundled name beside a project header that includes it. One file
// reached under two names is one in-memory header, as NVRTC's #pragma once sees one file
// (`aliased`: the caller checks that compile against one from the files).
#pragma once

#include "headers/include_lookups.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cudacore::detail {

struct SnapshotRequest {
    const IncludeSearch& search;       // include_search() of the program's name and flags
    const std::string& nvrtc_name;     // the name NVRTC is given
    std::string_view source;
    const std::vector<std::string>& flags;                // NVRTC's flags, as Program::flags gives them
    const std::vector<std::string>& toolkit_directories;  // toolkit_include_dirs()
    const std::vector<std::string>& bundled_names;        // names the program's header bundles serve
};

struct SnapshotHeader {
    std::string name;     // the in-memory name NVRTC matches
    std::string content;  // `#line 1 "<spelling>"` and the file's bytes, operands rewritten
};

struct CompileSnapshot {
    std::string nvrtc_name;
    std::string source;                  // given to NVRTC (operands rewritten)
    std::vector<std::string> flags;      // given to NVRTC (project include folders left out)
    std::vector<SnapshotHeader> headers;  // given to NVRTC from memory
    // The only folders NVRTC reads headers from on disk: the toolkit's (and the standard headers').
    std::vector<std::string> fixed_folders;
    // The toolkit's files reached from the program's includes, by one SHA-256 (hex) of their paths
    // and bytes (read once per process: the toolkit is fixed while it runs).
    std::string toolkit_digest;
    // Those files, sorted (null when the program includes none): a check compile that reads
    // another toolkit file met an include the scan did not follow, whose bytes no key holds.
    std::shared_ptr<const std::vector<std::string>> toolkit_files;
    // The project's include folders (absolute, sorted, each once), which a compile from the files
    // searches for an angled name before the toolkit's: a toolkit file the check compile read
    // under a name one of them also holds is one that compile may not have read.
    std::vector<std::string> project_include_folders;
    // The names the program's header bundles serve, which a quoted include keeps (NVRTC looks for
    // them beside the includer, then matches the bundle's).
    std::vector<std::string> bundled_names;
    // Whether anything outside the toolkit was looked at (a file read, a folder or a path looked
    // up): when not, the snapshot follows from the program and its flags alone.
    bool reads_files = false;
    std::string refusal;                     // why this compile cannot be given from memory, or empty
    // Two names of one file, where the snapshot has one (NVRTC's #pragma once follows file
    // identity): "'a' and 'b'", or empty. Such a compile from memory is checked against one from
    // the files before it is kept.
    std::string aliased;
};

// Whether NVRTC, compiling `snapshot` and looking up `path` without finding it, looked for a quoted
// include of the project's text that the scan did not find: beside a project header given from
// memory (under the memory folder, not one of the headers' names), or beside the source (in the
// folder of its name, or relative to the working directory for a bare name: neither the name
// itself nor one of NVRTC's own), under a name no header bundle serves (each also tried with
// ".stdh" appended, as NVRTC does). The folder of a name given from memory is no such lookup:
// NVRTC looks it up before looking beside that header, where each name is then recorded itself. NVRTC looks there first
// only for a quoted name, and every operand the scan found is rewritten to a header's name, to an
// angled toolkit name or to a bundled name. Thread-safe.
bool looked_up_beside_project_text(const CompileSnapshot& snapshot, const std::string& path);

// Reads the program's project headers (each once) and resolves every include as NVRTC would.
// Never throws except std::bad_alloc; thread-safe.
CompileSnapshot take_compile_snapshot(const SnapshotRequest& request);

// A folder and another spelling of it.
struct Respelling {
    std::string from;
    std::string to;
};

// `snapshot` as it would be where each folder `from` is spelled `to`: every path NVRTC is given
// (the name, the spellings of the headers, the flags) that starts with `from` + '/' starts with
// `to` + '/' (a folder "/" or "" is left alone). What keys code that does not depend on where the
// project lies, and the compile that shows that it does not.
CompileSnapshot respelled(const CompileSnapshot& snapshot, const std::vector<Respelling>& folders);

// Everything NVRTC is given, in one string of length-prefixed fields: what a key hashes.
std::string serialized_inputs(const CompileSnapshot& snapshot);

// The in-memory headers' name and content pointers, for nvrtcCreateProgram (valid while
// `snapshot` is).
std::pair<std::vector<const char*>, std::vector<const char*>> nvrtc_headers(const CompileSnapshot& snapshot);

}  // namespace cudacore::detail
