// Cache keys that do not name where a project lives. A compile's paths are keyed relative to its
// project folder (the deepest folder holding the program's folder and every include folder outside
// the toolkit), so the same project checked out at two paths keys its programs alike and shares
// their code, on disk and through Redis. Whether the code itself depends on that folder is shown
// by a check compile, not guessed (code/code_keys.hpp). See docs/caching.md "Keys that do not
// name the checkout". Internal.
#pragma once

#include "cudacore/program.hpp"
#include "headers/include_lookups.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace cudacore::detail {

// The folders a compile's paths are keyed relative to. Any choice of folders is safe: the mapping
// is one to one, and the key holds the folders wherever the code may name a path.
struct ProjectRoot {
    std::string folder;  // absolute, normal, no trailing '/' (but "/")
    // The standard headers' folder when the search holds it (it lies in each user's cache
    // folder), else empty.
    std::string standard_headers;

    // `path` (absolute) as a key names it: "%" or "%/rest" in the standard headers' folder, "@"
    // or "@/rest" in the project folder (by text, ".." and all), else `path` itself. One to one
    // for given folders.
    std::string key_text(const std::string& path) const;
    // The path that key_text gave `text`.
    std::string path_of(const std::string& text) const;
    // Whether key_text(path) is relative (the path lies in one of the folders).
    bool holds(const std::string& path) const;
};

// The project folder of a compile searching `search`: the deepest folder holding its main
// folder and every search folder outside `toolkit_directories` and the standard headers' folder
// that shares a folder other than "/" with the main folder (one of another tree is keyed by its
// path).
ProjectRoot project_root(const IncludeSearch& search, const std::vector<std::string>& toolkit_directories);

// `flag` (one of Program::flags) as a source key names it: an absolute include folder or
// pre-include (in any of NVRTC's spellings, the value of a separate "-I" included) by key_text.
std::string key_flag(const ProjectRoot& root, const std::string& flag);

}  // namespace cudacore::detail
