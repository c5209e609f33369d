// Where a C++ compile looks for headers (the folder of the main source, the -I folders, the
// toolkit's, the pre-includes), resolved against the working directory, and what a lookup of a
// path finds: what a compile snapshot (compile_snapshot.hpp) resolves includes with. Internal.
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
    // --no-source-include: quoted includes are not looked for beside the including file.
    bool no_source_include = false;
};

// Flag `flags[at]` as NVRTC reads it where it names an include folder (--include-path=D,
// --include-path D, -ID, -I=D, -I D) or a pre-include (--pre-include=H, --pre-include H,
// -include=H, -include H): its operand and how many flags it takes (2 where the operand follows).
struct IncludeFlag {
    enum class Kind { other, folder, pre_include } kind = Kind::other;
    std::string operand;
    std::size_t count = 1;
};
IncludeFlag include_flag(const std::vector<std::string>& flags, std::size_t at);

// In each folder it searches, NVRTC looks for a name whose last part has no '.' also with
// ".stdh" appended (the form of its own standard headers), when the name itself is not there.
inline constexpr std::string_view stdh_suffix = ".stdh";
inline bool tried_as_stdh(std::string_view name) noexcept {
    const std::size_t slash = name.rfind('/');
    return name.substr(slash == std::string_view::npos ? 0 : slash + 1).find('.') == std::string_view::npos;
}
// Whether NVRTC, looking for `name` at `path` (a folder joined with it), finds something there:
// the path, or its ".stdh" form. `state` is lookup_state or a LookupStates' state.
template <class State>
bool nvrtc_finds_at(const std::string& path, std::string_view name, State&& state) {
    return state(path) != "absent" || (tried_as_stdh(name) && state(path + std::string(stdh_suffix)) != "absent");
}

// Whether a folder lookup of `name` (relative) may find what a lookup in memory, which matches
// names as they are, does not: "./x.h", "d//y.h", "d/./y.h" or "d/../x.h" reach a header bundle's
// "x.h" or "d/y.h" through its folder only.
inline bool folder_reads_otherwise(std::string_view name) noexcept {
    if (name.empty() || name.front() == '/') return false;
    if (name.find("//") != std::string_view::npos) return true;
    for (std::size_t start = 0;;) {
        const std::size_t slash = name.find('/', start);
        const std::string_view part = name.substr(start, slash == std::string_view::npos ? slash : slash - start);
        if (part == "." || part == "..") return true;
        if (slash == std::string_view::npos) return false;
        start = slash + 1;
    }
}

// The current working directory (one getcwd), or empty when it cannot be read.
std::string current_working_directory();

// Relative folders are resolved against the current working directory, as NVRTC opens them.
IncludeSearch include_search(const std::string& program_name, const std::vector<std::string>& flags);

// What a lookup of `path` finds now: "absent", "file", "directory", "other" or "error N" (an
// errno other than ENOENT / ENOTDIR). One stat, following symbolic links as open does.
std::string lookup_state(const std::string& path);

// lookup_state for many paths at once: a path whose folder is missing is absent without a stat of
// its own, and each folder and path is asked once (a <cuda/std/...> name tried in an -I folder
// without a cuda/ costs one stat for all of them). Gives what lookup_state gives. One per look at
// the files (a compile snapshot): folders and paths are remembered for its lifetime.
class LookupStates {
public:
    std::string state(const std::string& path);

private:
    bool is_directory(const std::string& folder);
    std::unordered_map<std::string, bool> folders_;         // folder -> is a directory
    std::unordered_map<std::string, std::string> paths_;    // path -> its state
};

// Whether `path` lies inside one of `directories` (by its text: "a/b" is inside "a"). A path
// with a ".." component is inside none.
bool inside_any(const std::string& path, const std::vector<std::string>& directories);

}  // namespace cudacore::detail
