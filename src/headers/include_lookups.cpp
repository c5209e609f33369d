#include "headers/include_lookups.hpp"

#include "headers/include_directives.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
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
    if (!normal_absolute(path)) path = fs::path(path).lexically_normal().string();
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    return path;
}

// The path the preprocessor opens for `name` in `folder`.
std::string joined(const std::string& folder, const std::string& name) {
    if (!name.empty() && name.front() == '/') return name;
    return folder == "/" ? "/" + name : folder + "/" + name;
}

bool has_dot_dot(std::string_view path) {
    return path == ".." || path.starts_with("../") || path.ends_with("/..") ||
           path.find("/../") != std::string_view::npos;
}

}  // namespace

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
    // NVRTC's spellings: --include-path=D, --include-path D, -ID, -I D; --pre-include=H,
    // --pre-include H, -include H.
    for (std::size_t i = 0; i < flags.size(); ++i) {
        const std::string_view flag = flags[i];
        const bool has_next = i + 1 < flags.size();
        if (flag.starts_with("--include-path=")) {
            search.directories.push_back(resolve(std::string(flag.substr(15))));
        } else if ((flag == "--include-path" || flag == "-I") && has_next) {
            search.directories.push_back(resolve(flags[++i]));
        } else if (flag.starts_with("-I") && flag.size() > 2) {
            search.directories.push_back(resolve(std::string(flag.substr(2))));
        } else if (flag.starts_with("--pre-include=")) {
            search.pre_includes.emplace_back(flag.substr(14));
        } else if ((flag == "--pre-include" || flag == "-include") && has_next) {
            search.pre_includes.push_back(flags[++i]);
        }
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
    const std::size_t slash = path.rfind('/');
    // No folder: stat(path) fails with ENOENT or ENOTDIR, which lookup_state calls absent.
    if (slash != std::string::npos && slash != 0 && !is_directory(path.substr(0, slash)))
        return "absent";
    return lookup_state(path);
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

namespace {

// The closure of a compile's includes: the files it read (the main source first) and every path
// a lookup of theirs tried. A step returns false once `refusal` says why the closure cannot be
// known.
class IncludeClosure {
public:
    IncludeClosure(const IncludeSearch& search, const std::string& main_name, std::string_view main_source,
                   const std::vector<std::string>& toolkit_directories, const FileReader& read)
        : search_(search), toolkit_directories_(toolkit_directories), read_(read) {
        files_.push_back({.label = main_name, .folder = search.main_directory,
                           .text = std::string(main_source)});
    }

    std::string refusal;

    // False when the file cannot be read.
    bool add_file(const std::string& path) {
        if (!known_.insert(path).second) return true;
        std::optional<std::string> text = read_(path);
        if (!text) {
            refusal = "the header '" + path + "' cannot be read back";
            return false;
        }
        files_.push_back({.label = path,
                          .folder = fs::path(path).parent_path().string(),
                          .text = std::move(*text),
                          .toolkit = inside_any(path, toolkit_directories_)});
        return true;
    }

    // Every existing file a name may lead to is read as the preprocessor may have read it: the
    // closure does not depend on which #if held, nor on the compile's own record being complete.
    bool look_up(const std::string& name, const std::string* own_folder) {
        std::vector<std::string> candidates;
        if (!name.empty() && name.front() == '/') {
            candidates.push_back(name);
        } else {
            if (own_folder) candidates.push_back(joined(*own_folder, name));
            for (const auto& dir : search_.directories) candidates.push_back(joined(dir, name));
        }
        for (auto& candidate : candidates) {
            if (!paths_.insert(candidate).second) continue;
            if (lookup_state(candidate) == "file" && !add_file(candidate)) return false;
        }
        return true;
    }

    bool look_up_pre_includes() {
        for (const auto& name : search_.pre_includes) {
            if (!look_up(name, &search_.main_directory)) return false;
            const std::string working_directory = absolute_folder(".", current_working_directory());
            if (!look_up(joined(working_directory, name), nullptr)) return false;
        }
        return true;
    }

    // Scans and follows every file until no new file turns up. Wrapper macros may be defined in
    // one file and used in another: when a scan finds a new one, every file is scanned again.
    bool follow_all() {
        for (bool more = true; more;) {
            more = false;
            const std::size_t wrappers_known = wrappers_.size();
            for (File& file : files_) {
                if (file.scanned) continue;
                file.scan = scan_include_directives(file.text, wrappers_);
                file.scanned = true;
                wrappers_.insert(file.scan.has_include_wrappers.begin(), file.scan.has_include_wrappers.end());
            }
            if (wrappers_.size() != wrappers_known) {
                for (File& file : files_) file.scanned = file.followed = false;
                computed_folders_.clear();
                more = true;
                continue;
            }
            for (std::size_t i = 0; i < files_.size(); ++i) {
                if (files_[i].followed || !files_[i].scanned) continue;  // found just now: next round
                files_[i].followed = true;
                more = true;
                if (!follow(i)) return false;
            }
        }
        return true;
    }

    // The lookups found: every path tried, every file read but the main source.
    IncludeLookups result() {
        add_computed_paths();
        IncludeLookups lookups;
        lookups.paths.assign(paths_.begin(), paths_.end());
        for (std::size_t i = 1; i < files_.size(); ++i) lookups.headers.push_back(files_[i].label);
        std::sort(lookups.headers.begin(), lookups.headers.end());
        return lookups;
    }

private:
    struct File {
        std::string label;
        std::string folder;  // where its quoted includes are looked for first
        std::string text;
        bool toolkit = false;
        IncludeDirectives scan{};
        bool scanned = false;
        bool followed = false;
    };

    // Looks up what file i includes.
    bool follow(std::size_t i) {
        // Copies: look_up may grow `files_`.
        const IncludeDirectives scan = files_[i].scan;
        const std::string folder = files_[i].folder, label = files_[i].label;
        if (!scan.computed_has_includes.empty()) {
            refusal = "'" + label + "' tests for a header named by a macro (" +
                      scan.computed_has_includes.front() + ")";
            return false;
        }
        if (!scan.computed_includes.empty()) {
            if (!files_[i].toolkit) {
                refusal = "'" + label + "' includes a header named by a macro (" +
                          scan.computed_includes.front() + ")";
                return false;
            }
            computed_folders_.push_back(folder);
        }
        for (const IncludeOperand& operand : scan.operands)
            if (!look_up(operand.name, operand.quoted ? &folder : nullptr)) return false;
        return true;
    }

    // What a macro named (in a toolkit file) is one of the headers read, relative to a folder it
    // was looked for in: each is tried as a name, in each such folder.
    void add_computed_paths() {
        if (computed_folders_.empty()) return;
        std::vector<std::string> folders = search_.directories;
        folders.insert(folders.end(), computed_folders_.begin(), computed_folders_.end());
        std::sort(folders.begin(), folders.end());
        folders.erase(std::unique(folders.begin(), folders.end()), folders.end());
        std::set<std::string> names;
        for (std::size_t i = 1; i < files_.size(); ++i)
            for (const auto& folder : folders)
                if (inside_any(files_[i].label, {folder}))
                    names.insert(files_[i].label.substr(folder == "/" ? 1 : folder.size() + 1));
        for (const auto& name : names)
            for (const auto& folder : folders) paths_.insert(joined(folder, name));
    }

    const IncludeSearch& search_;
    const std::vector<std::string>& toolkit_directories_;
    const FileReader& read_;
    std::vector<File> files_;
    std::set<std::string> known_;  // the paths of `files_`
    std::set<std::string> paths_;  // every path a lookup tried
    std::set<std::string, std::less<>> wrappers_;
    std::vector<std::string> computed_folders_;  // of toolkit files that include by macro
};

}  // namespace

IncludeLookups include_lookups(const IncludeSearch& search, const std::string& main_name,
                               std::string_view main_source,
                               const std::vector<std::string>& headers_read,
                               const std::vector<std::string>& toolkit_directories,
                               const FileReader& read) {
    IncludeClosure closure(search, main_name, main_source, toolkit_directories, read);
    bool known = true;
    for (const auto& path : headers_read) known = known && closure.add_file(path);
    if (!known || !closure.look_up_pre_includes() || !closure.follow_all()) {
        IncludeLookups refused;
        refused.refusal = closure.refusal;
        return refused;
    }
    return closure.result();
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
