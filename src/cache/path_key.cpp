#include "cache/path_key.hpp"

#include "headers/path_names.hpp"
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

bool is_path_flag(const std::string& flag) {
    return std::any_of(std::begin(path_prefixes), std::end(path_prefixes),
                       [&](std::string_view prefix) { return flag.starts_with(prefix); }) ||
           flag == "--include-path" || flag == "-include" || flag == "--pre-include" ||
           flag.starts_with("--pch-dir");  // where NVRTC keeps its PCH: not in the code
}

bool is_debug_flag(const std::string& flag) {
    return flag == "-G" || flag == "-g" || flag.find("debug") != std::string::npos ||
           flag.find("line") != std::string::npos;
}

// Names that name a path, and the macros that expand to one (through others too), defined in any
// of `files`.
std::set<std::string, std::less<>> path_naming_names(const std::vector<const PathNames*>& files) {
    std::set<std::string, std::less<>> names;
    bool grew = true;
    while (grew) {
        grew = false;
        for (const PathNames* file : files) {
            for (const auto& [macro, body] : file->macros) {
                if (names.count(macro)) continue;
                if (names_path(macro) || std::any_of(body.begin(), body.end(), [&](const std::string& name) {
                        return names_path(name) || names.count(name);
                    })) {
                    names.insert(macro);
                    grew = true;
                }
            }
        }
    }
    return names;
}

bool uses_any(const std::vector<std::string>& identifiers,
              const std::set<std::string, std::less<>>& naming) {
    return std::any_of(identifiers.begin(), identifiers.end(), [&](const std::string& name) {
        return names_path(name) || naming.count(name);
    });
}

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

namespace {

// What the files of a view say, whatever the flags: the names that may name a path (macros
// followed through every file) and whether the main source or a header uses one. The same
// source and headers give the same answer, so it is remembered: a thousand specializations of
// one <cuda/std> kernel (one source, some 300 headers of thousands of macros) scan them once.
struct FilesVerdict {
    std::set<std::string, std::less<>> naming;
    bool files_name_paths = false;
};

// The view's files, exactly: the main source, then each header's digest and whether it lies in
// the project (which decides which of its names count).
std::string files_key(const Program& program, const FileView& view, const ProjectRoot& root) {
    std::string key;
    key.reserve(program.source().size() + view.headers.size() * 66 + 1);
    key.append(program.source());
    key.push_back('\0');
    for (const auto& [path, digest] : view.headers) {
        key.append(digest.digest);
        key.push_back(root.holds(path) ? '1' : '0');
    }
    return key;
}

// Null when a header no longer holds the bytes its digest names (the path is kept then).
std::shared_ptr<const FilesVerdict> files_verdict(const Program& program, const FileView& view,
                                                  const ProjectRoot& root) {
    static std::mutex mutex;
    static auto* known = new std::map<std::string, std::shared_ptr<const FilesVerdict>, std::less<>>;  // leaked: used at exit
    std::string key = files_key(program, view, root);
    {
        std::lock_guard lock(mutex);
        if (auto it = known->find(key); it != known->end()) return it->second;
    }
    const PathNames main = scan_path_names(program.source());
    std::vector<const PathNames*> files{&main};
    std::vector<std::shared_ptr<const PathNames>> headers;
    for (const auto& [path, digest] : view.headers) {
        std::shared_ptr<const PathNames> names = path_names_of_file(path, digest.digest);
        if (!names) return nullptr;
        files.push_back(names.get());
        headers.push_back(std::move(names));
    }
    auto verdict = std::make_shared<FilesVerdict>();
    verdict->naming = path_naming_names(files);
    verdict->files_name_paths = uses_any(main.identifiers, verdict->naming);
    for (std::size_t i = 0; i < headers.size() && !verdict->files_name_paths; ++i) {
        const bool in_project = root.holds(view.headers[i].first);
        verdict->files_name_paths = uses_any(in_project ? headers[i]->identifiers : headers[i]->assigned,
                                             verdict->naming);
    }
    std::lock_guard lock(mutex);
    if (known->size() >= 64) known->clear();  // a bound, not a policy: programs rarely differ this much
    known->emplace(std::move(key), verdict);
    return verdict;
}

}  // namespace

bool code_may_name_paths(const Program& program, const std::vector<std::string>& flags,
                         const FileView& view, const ProjectRoot& root) {
    if (!program.debug_source_path().empty() || !program.options().header_bundles.empty()) return true;
    const std::shared_ptr<const FilesVerdict> files = files_verdict(program, view, root);
    if (!files) return true;  // not the bytes the key names: keep the path
    for (std::size_t i = 0; i < flags.size(); ++i) {
        const std::string& flag = flags[i];
        if (is_path_flag(flag)) {
            if (flag == "-I" || flag == "--include-path" || flag == "-include" || flag == "--pre-include")
                ++i;  // and its value
            continue;
        }
        if (is_debug_flag(flag) || flag.find('/') != std::string::npos ||
            uses_any(scan_path_names(flag).identifiers, files->naming))
            return true;
    }
    return files->files_name_paths;
}

}  // namespace cudacore::detail
