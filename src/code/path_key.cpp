#include "code/path_key.hpp"

#include "headers/standard_headers.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <memory>
#include <set>

namespace cudacore::detail {
namespace {

// Whether `path` is `folder` or lies below it, by text.
bool in_folder(const std::string& path, const std::string& folder) {
    if (folder.empty()) return false;
    if (folder == "/") return !path.empty() && path.front() == '/';
    return path.compare(0, folder.size(), folder) == 0 &&
           (path.size() == folder.size() || path[folder.size()] == '/');
}

// `path` below `folder` as `tag` + the rest ("@/a/b.h"), or `tag` alone for the folder itself.
std::string relative_text(const std::string& path, const std::string& folder, char tag) {
    if (folder == "/") return tag + path;  // "/a/b.h" -> "@/a/b.h"
    return tag + path.substr(folder.size());
}

std::string absolute_text(const std::string& text, const std::string& folder) {
    if (text.size() == 1) return folder;
    return (folder == "/" ? std::string() : folder) + text.substr(1);
}

// The deepest folder holding both (normal absolute folders).
std::string common_folder(const std::string& a, const std::string& b) {
    std::string common = a;
    while (!in_folder(b, common)) {
        const std::size_t slash = common.rfind('/');
        common = slash == 0 || slash == std::string::npos ? "/" : common.substr(0, slash);
    }
    return common;
}

bool is_standard_headers_folder(const std::string& folder) {
    const std::string flag = "--include-path=" + folder;
    return standard_headers_key_flag(flag) != flag;
}

// NVRTC's spellings of an option whose value is a path: --include-path=, -I, --pre-include=.
constexpr std::string_view path_prefixes[] = {"--include-path=", "--pre-include=", "-I"};

}  // namespace

std::string ProjectRoot::key_text(const std::string& path) const {
    if (in_folder(path, standard_headers)) return relative_text(path, standard_headers, '%');
    if (in_folder(path, folder)) return relative_text(path, folder, '@');
    return path;
}

std::string ProjectRoot::path_of(const std::string& text) const {
    if (!text.empty() && text.front() == '%') return absolute_text(text, standard_headers);
    if (!text.empty() && text.front() == '@') return absolute_text(text, folder);
    return text;
}

bool ProjectRoot::holds(const std::string& path) const {
    return in_folder(path, standard_headers) || in_folder(path, folder);
}

ProjectRoot project_root(const IncludeSearch& search, const std::vector<std::string>& toolkit_directories) {
    ProjectRoot root{search.main_directory, {}};
    for (const auto& folder : search.directories) {
        if (std::find(toolkit_directories.begin(), toolkit_directories.end(), folder) !=
                toolkit_directories.end() ||
            inside_any(folder, toolkit_directories))
            continue;
        if (is_standard_headers_folder(folder)) {
            root.standard_headers = folder;
            continue;
        }
        // A folder of another tree than the program's (/usr/include/eigen3 beside /builds/x) is
        // keyed by its path: taking it in would make "/" the project folder.
        if (common_folder(search.main_directory, folder) == "/" && search.main_directory != "/") continue;
        root.folder = common_folder(root.folder, folder);
    }
    return root;
}

std::string key_flag(const ProjectRoot& root, const std::string& flag) {
    if (!flag.empty() && flag.front() == '/') return root.key_text(flag);  // the value of "-I" D
    for (std::string_view prefix : path_prefixes) {
        if (flag.size() > prefix.size() && flag.starts_with(prefix) && flag[prefix.size()] == '/')
            return std::string(prefix) + root.key_text(flag.substr(prefix.size()));
    }
    return flag;
}

}  // namespace cudacore::detail
