// Every place the preprocessor of one C++ compile may have looked for a header, found or not, so
// that compile_cached can key a compile by what each of those places holds now: a header created
// in a folder searched earlier, next to the source in another project, or tested with
// __has_include, then changes the key. Internal.
//
// The places follow from the search (the folder of the main source, the -I folders, the
// toolkit's) and from the names each file asks for (include_directives.hpp), tried in every
// folder the preprocessor could try them in: quoted names in the including file's own folder, all
// names in every search folder; every file found there is followed in turn. That is more than
// the preprocessor tries (it stops at the first find; names under a false #if are listed too),
// never less, except where a macro makes the name:
// then the lookups are not known and the compile is not cached, with one exception, the
// toolkit's own headers (thrust names headers by macro): there every header the compile read is
// tried as the name, relative to every search folder.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace cudacore::detail {

// Where NVRTC searches, from a program's name and flags (Program::flags).
struct IncludeSearch {
    // Absolute: the folder of the program name, where the main source's quoted includes are
    // looked for first (NVRTC resolves them against the name's folder, the working directory
    // for a bare name).
    std::string main_directory;
    // Absolute, in search order: --include-path / -I (the toolkit's folders among them).
    std::vector<std::string> directories;
    // --pre-include / -include operands, as given.
    std::vector<std::string> pre_includes;
    // The working directory that relative folders (and pre-includes, looked for there too) were
    // resolved against; empty when nothing in the search depends on it.
    std::string working_directory;
    // The folders above (main_directory, directories) that were resolved against it.
    std::vector<std::string> relative_folders;
};

// The current working directory (one getcwd), or empty when it cannot be read.
std::string current_working_directory();

// Relative folders are resolved against the current working directory, as NVRTC opens them.
IncludeSearch include_search(const std::string& program_name, const std::vector<std::string>& flags);

struct IncludeLookups {
    // Every header the compile may have read: each existing file a name may lead to, from the
    // main source on, and the headers the compile reported; absolute paths, sorted.
    std::vector<std::string> headers;
    // Every path tried (or possibly tried), found or not, each once, sorted.
    std::vector<std::string> paths;
    // Not empty when the lookups cannot be known: why (the file and the directive, or a header
    // that cannot be read).
    std::string refusal;
};

// A file's contents, or nullopt when it cannot be read.
using FileReader = std::function<std::optional<std::string>(const std::string& path)>;

// The lookups of a compile of `main_source` (named `main_name` in messages) that reported
// `headers_read` (Program::compile with headers_read; NVRTC's report is not always complete, so
// the headers are followed from the main source too). `toolkit_directories`: folders whose
// headers are the toolkit's (toolkit_include_dirs()).
IncludeLookups include_lookups(const IncludeSearch& search, const std::string& main_name,
                               std::string_view main_source,
                               const std::vector<std::string>& headers_read,
                               const std::vector<std::string>& toolkit_directories,
                               const FileReader& read);

// What a lookup of `path` finds now: "absent", "file", "directory", "other" or "error N" (an
// errno other than ENOENT / ENOTDIR). One stat, following symbolic links as open does.
std::string lookup_state(const std::string& path);

// lookup_state for many paths at once: a path whose folder is missing is absent without a stat of
// its own, and each folder is asked once (a <cuda/std/...> name tried in an -I folder without a
// cuda/ costs one stat for all of them). Gives what lookup_state gives. One per batch of lookups:
// folders are remembered for its lifetime.
class LookupStates {
public:
    std::string state(const std::string& path);

private:
    bool is_directory(const std::string& folder);
    std::unordered_map<std::string, bool> folders_;  // folder -> is a directory
};

// Whether `path` lies inside one of `directories` (by its text: "a/b" is inside "a"). A path
// with a ".." component is inside none.
bool inside_any(const std::string& path, const std::vector<std::string>& directories);

}  // namespace cudacore::detail
