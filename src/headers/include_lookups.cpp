#include "headers/include_lookups.hpp"


#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <set>
#include <system_error>
#include <utility>

namespace cudacore::detail {
namespace {

namespace fs = std::filesystem;

// Absolute with no empty, "." or ".." component (a trailing slash allowed): already normal.
bool normal_absolute(std::string_view path) {
    if (path.empty() || path.front() != '/') return false;
    for (std::size_t start = 1; start < path.size();) {
        std::size_t end = path.find('/', start);
        if (end == std::string_view::npos) end = path.size();
        const std::string_view part = path.substr(start, end - start);
        if ((part.empty() && end != path.size()) || part == "." || part == "..") return false;
        start = end + 1;
    }
    return true;
}

// `path` (absolute) without empty, "." and ".." parts, each ".." taken as the kernel takes it:
// the parent of where the path before it leads, which after a symbolic link is not the folder the
// text names (lnk/.. is the parent of lnk's target).
std::string without_dot_parts(std::string_view path) {
    std::string out;  // the path so far, "" for the root
    for (std::size_t start = 1; start <= path.size();) {
        std::size_t end = path.find('/', start);
        if (end == std::string_view::npos) end = path.size();
        const std::string_view part = path.substr(start, end - start);
        start = end + 1;
        if (part.empty() || part == ".") continue;
        if (part != "..") {
            out.append("/").append(part);
            continue;
        }
        char real[PATH_MAX];
        if (!out.empty() && ::realpath(out.c_str(), real) != nullptr) out = std::strcmp(real, "/") == 0 ? "" : real;
        out.erase(std::min(out.size(), out.rfind('/')));  // its parent (the root's is the root)
    }
    return out.empty() ? "/" : out;
}

// `folder`, absolute (a relative one under `working_directory`) and normal.
std::string absolute_folder(const std::string& folder, const std::string& working_directory) {
    // The common cases without filesystem::path's copies of every part: a normal absolute folder
    // (the toolkit's), and a normal relative one (a program name's folder) under the working one.
    std::string path;
    if (!folder.empty() && folder.front() == '/') {
        path = folder;
    } else if (!working_directory.empty()) {
        path = working_directory;
        if (!folder.empty() && folder != ".") path += '/' + folder;
    } else {  // the working directory cannot be read
        std::error_code ignored;
        path = fs::absolute(fs::path(folder.empty() ? "." : folder), ignored).string();
    }
    if (!normal_absolute(path)) path = without_dot_parts(path);
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    return path;
}

bool has_dot_dot(std::string_view path) {
    return path == ".." || path.starts_with("../") || path.ends_with("/..") ||
           path.find("/../") != std::string_view::npos;
}

}  // namespace

IncludeFlag include_flag(const std::vector<std::string>& flags, std::size_t at) {
    const std::string_view flag = flags[at];
    const bool has_next = at + 1 < flags.size();
    using Kind = IncludeFlag::Kind;
    // The joined short forms drop one '=' (-I=D is D, -I==D is =D), as NVRTC does.
    auto joined = [](std::string_view operand) {
        return std::string(operand.starts_with('=') ? operand.substr(1) : operand);
    };
    if (flag.starts_with("--include-path=")) return {Kind::folder, std::string(flag.substr(15))};
    if ((flag == "--include-path" || flag == "-I") && has_next) return {Kind::folder, flags[at + 1], 2};
    // Last of all, with no operand: NVRTC searches the working directory.
    if (flag == "--include-path" || flag == "-I") return {Kind::folder, std::string(), 1};
    if (flag.starts_with("-I") && flag.size() > 2) return {Kind::folder, joined(flag.substr(2))};
    if (flag.starts_with("--pre-include=")) return {Kind::pre_include, std::string(flag.substr(14))};
    if ((flag == "--pre-include" || flag == "-include") && has_next) return {Kind::pre_include, flags[at + 1], 2};
    if (flag.starts_with("-include=")) return {Kind::pre_include, joined(flag.substr(8))};
    return {};
}

std::string current_working_directory() {
    char cwd[PATH_MAX];
    return ::getcwd(cwd, sizeof cwd) != nullptr ? std::string(cwd) : std::string();
}

IncludeSearch include_search(const std::string& program_name,
                             const std::vector<std::string>& flags) {
    IncludeSearch search;
    // Read once, so that the folders and working_directory agree.
    std::string working_directory = current_working_directory();
    auto resolve = [&](const std::string& folder) {
        std::string absolute = absolute_folder(folder, working_directory);
        if (folder.empty() || folder.front() != '/') search.relative_folders.push_back(absolute);
        return absolute;
    };
    search.main_directory = resolve(fs::path(program_name).parent_path().string());
    for (std::size_t i = 0; i < flags.size();) {
        IncludeFlag flag = include_flag(flags, i);
        i += flag.count;
        if (flag.kind == IncludeFlag::Kind::folder) search.directories.push_back(resolve(flag.operand));
        else if (flag.kind == IncludeFlag::Kind::pre_include) search.pre_includes.push_back(std::move(flag.operand));
        else if (flags[i - 1] == "--no-source-include" || flags[i - 1] == "-no-source-include")
            search.no_source_include = true;
    }
    if (!search.relative_folders.empty() || !search.pre_includes.empty())
        search.working_directory = std::move(working_directory);
    return search;
}

bool LookupStates::is_directory(const std::string& folder) {
    if (auto it = folders_.find(folder); it != folders_.end()) return it->second;
    const std::size_t slash = folder.rfind('/');
    bool is_dir = false;
    if (slash == std::string::npos || slash == 0 || is_directory(folder.substr(0, slash))) {
        struct ::stat info {};
        is_dir = ::stat(folder.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
    }
    folders_.emplace(folder, is_dir);
    return is_dir;
}

std::string LookupStates::state(const std::string& path) {
    if (auto it = paths_.find(path); it != paths_.end()) return it->second;
    const std::size_t slash = path.rfind('/');
    // No folder: stat(path) fails with ENOENT or ENOTDIR, which lookup_state calls absent.
    std::string found = slash != std::string::npos && slash != 0 && !is_directory(path.substr(0, slash))
                            ? "absent"
                            : lookup_state(path);
    return paths_.emplace(path, std::move(found)).first->second;
}

bool inside_any(const std::string& path, const std::vector<std::string>& directories) {
    if (has_dot_dot(path)) return false;
    for (const auto& dir : directories) {
        if (dir == "/" && path.size() > 1 && path.front() == '/') return true;
        if (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
            path[dir.size()] == '/')
            return true;
    }
    return false;
}

std::string lookup_state(const std::string& path) {
    struct ::stat info {};
    if (::stat(path.c_str(), &info) != 0) {
        const int error = errno;
        if (error == ENOENT || error == ENOTDIR) return "absent";
        return "error " + std::to_string(error);
    }
    if (S_ISREG(info.st_mode)) return "file";
    if (S_ISDIR(info.st_mode)) return "directory";
    return "other";
}

}  // namespace cudacore::detail
