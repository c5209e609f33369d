#include "headers/header_closure.hpp"

#include "cudacore/errors.hpp"
#include "headers/include_directives.hpp"
#include "support/input_file.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <stdexcept>
#include <system_error>

namespace cudacore {
namespace detail {
namespace {

namespace fs = std::filesystem;

fs::path normal(const fs::path& path) {
    std::error_code ignored;
    return fs::absolute(path, ignored).lexically_normal();
}

bool is_file(const fs::path& path) {
    std::error_code ignored;
    return fs::is_regular_file(path, ignored);
}

// The path of `file` below `root` ("a/b.h"), or empty when it is not inside.
std::string below(const fs::path& file, const fs::path& root) {
    const fs::path relative = file.lexically_relative(root);
    if (relative.empty() || *relative.begin() == ".." || relative == ".") return {};
    return relative.generic_string();
}

std::string_view trim_right(std::string_view text) {
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
    return text;
}

std::string_view trim_left(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    return text;
}

// Whether the text of a line before a quoted operand makes it the operand of an include
// directive or of a __has_include test.
bool operand_position(std::string_view before) {
    before = trim_right(before);
    if (!before.empty() && before.back() == '(') {
        before = trim_right(before.substr(0, before.size() - 1));
        return before.ends_with("__has_include") || before.ends_with("__has_include_next");
    }
    for (std::string_view keyword : {"include_next", "include", "import"}) {
        if (!before.ends_with(keyword)) continue;
        const std::string_view rest = trim_right(before.substr(0, before.size() - keyword.size()));
        return trim_left(rest) == "#";
    }
    return false;
}

struct Node {
    std::string name;
    fs::path file;
    fs::path root;  // the folder `name` is relative to
    std::string text;
    std::set<std::pair<std::string, std::string>> rewrites;  // quoted operand -> its name
};

class Gatherer {
public:
    Gatherer(const std::vector<fs::path>& folders, const std::set<fs::path>& opened,
             bool allow_outside, const std::string& what)
        : what_(what), opened_(opened), allow_outside_(allow_outside) {
        for (const auto& folder : folders) folders_.push_back(normal(folder));
    }

    void add(const std::string& name, const fs::path& file, const fs::path& root,
             const std::string& included_by) {
        const fs::path path = normal(file);
        if (auto includer = by_name_.find(included_by); includer != by_name_.end() &&
                                                        nodes_[includer->second].file != path)
            included_.insert(path);
        if (auto it = by_name_.find(name); it != by_name_.end()) {
            if (nodes_[it->second].file != path) {
                throw InvalidArgumentError(
                    what_ + ": two files would be the header '" + name + "': " +
                    nodes_[it->second].file.string() + " and " + path.string() +
                    (included_by.empty() ? std::string() : " (included by '" + included_by + "')") +
                    "; a bundle holds one file per include name");
            }
            return;
        }
        std::string text;
        try {
            text = read_file_bounded(path, HeaderBundle::max_payload_size);
        } catch (const std::exception& e) {
            throw SerializationError(what_ + ": cannot read the header '" + name + "': " + e.what());
        }
        by_name_.emplace(name, nodes_.size());
        nodes_.push_back({name, path, normal(root), std::move(text), {}});
    }

    // Looks `name` up in the folders, in order, as the preprocessor does; the first file found
    // goes in when the preprocessor opened it.
    void add_searched(const std::string& name, const std::string& included_by) {
        for (const auto& folder : folders_) {
            const fs::path candidate = folder / name;
            if (is_file(candidate)) {
                if (was_opened(candidate)) add(name, candidate, folder, included_by);
                return;
            }
        }
    }

    void follow() {
        // Wrapper macros of __has_include may be defined in one header and used in another:
        // when a scan finds a new one, every header is scanned again.
        std::set<std::string, std::less<>> wrappers;
        for (bool again = true; again;) {
            again = false;
            const std::size_t known = wrappers.size();
            for (std::size_t i = 0; i < nodes_.size(); ++i) {
                const IncludeDirectives scan = scan_include_directives(nodes_[i].text, wrappers);
                wrappers.insert(scan.has_include_wrappers.begin(), scan.has_include_wrappers.end());
                for (const IncludeOperand& operand : scan.operands) resolve(i, operand);
            }
            again = wrappers.size() != known;
        }
    }

    // The files no other header includes were included by the main source (or pre-included),
    // with names the directives cannot tell: where folders nest (a source folder above an -I
    // folder, <toolkit>/include above <toolkit>/include/cccl), one file has a name below each. Each
    // such file also gets the name below every other folder that holds it, where no folder
    // searched before that one has a file of that name (the preprocessor would find that one);
    // returns whether a name was added (then follow() again: the new names' directives).
    bool name_entries_in_every_folder() {
        bool added = false;
        std::set<fs::path> entries;
        for (const Node& node : nodes_)
            if (!included_.contains(node.file)) entries.insert(node.file);
        for (const fs::path& file : entries) {
            for (std::size_t f = 0; f < folders_.size(); ++f) {
                const std::string name = below(file, folders_[f]);
                if (name.empty() || by_name_.contains(name)) continue;
                bool found_earlier = false;
                for (std::size_t g = 0; g < f && !found_earlier; ++g)
                    found_earlier = is_file(folders_[g] / name) && normal(folders_[g] / name) != file;
                if (found_earlier) continue;
                add(name, file, folders_[f], {});
                added = true;
            }
        }
        return added;
    }

    std::vector<BundledHeader> headers() const {
        std::vector<BundledHeader> out;
        out.reserve(nodes_.size());
        for (const Node& node : nodes_) {
            std::string text = node.text;
            for (const auto& [from, to] : node.rewrites) text = rewrite_quoted_include(text, from, to);
            out.push_back({node.name, std::move(text)});
        }
        return out;
    }

private:
    bool was_opened(const fs::path& file) const { return opened_.count(normal(file)) != 0; }

    // The directives only name what the preprocessor opened (a file it never opened, under a
    // false #if or never reached, stays out); they say which name NVRTC will ask for.
    void resolve(std::size_t index, const IncludeOperand& operand) {
        const std::string& name = operand.name;
        if (name.empty()) return;
        const std::string includer = nodes_[index].name;
        if (name.front() == '/') {  // an absolute path is opened as it is (named as it is)
            if (is_file(name) && was_opened(name)) add(name, name, "/", includer);
            return;
        }
        if (operand.quoted) {
            // The including header's own folder first, as the preprocessor looks.
            const fs::path candidate = normal(nodes_[index].file.parent_path() / name);
            if (is_file(candidate)) {
                if (!was_opened(candidate)) return;
                fs::path root = nodes_[index].root;
                std::string canonical = below(candidate, root);
                for (std::size_t f = 0; canonical.empty() && f < folders_.size(); ++f) {
                    canonical = below(candidate, folders_[f]);
                    root = folders_[f];
                }
                if (canonical.empty()) {
                    if (!allow_outside_) {
                        throw InvalidArgumentError(
                            what_ + ": '" + includer + "' includes \"" + name + "\", which is " +
                            candidate.string() + ", outside every include folder: add its folder");
                    }
                    canonical = candidate.string();
                    root = "/";
                }
                add(canonical, candidate, root, includer);
                if (canonical != name) nodes_[index].rewrites.emplace(name, canonical);
                return;
            }
        }
        add_searched(name, includer);
    }

    std::string what_;
    std::vector<fs::path> folders_;
    const std::set<fs::path>& opened_;  // normal() paths
    bool allow_outside_;
    std::vector<Node> nodes_;
    std::map<std::string, std::size_t> by_name_;
    std::set<fs::path> included_;  // files some other header includes
};

}  // namespace

std::string rewrite_quoted_include(std::string_view text, std::string_view from, std::string_view to) {
    const std::string needle = "\"" + std::string(from) + "\"";
    std::string out;
    out.reserve(text.size());
    std::size_t position = 0;
    for (std::size_t found; (found = text.find(needle, position)) != std::string_view::npos;) {
        const std::size_t newline = text.rfind('\n', found);
        const std::size_t line_start = newline == std::string_view::npos ? 0 : newline + 1;
        out.append(text.substr(position, found - position));
        if (operand_position(text.substr(line_start, found - line_start))) {
            out += '"';
            out.append(to);
            out += '"';
        } else {
            out += needle;
        }
        position = found + needle.size();
    }
    out.append(text.substr(position));
    return out;
}

std::vector<BundledHeader> gather_headers(const std::vector<std::string>& opened,
                                          const std::vector<fs::path>& folders,
                                          bool allow_outside, const std::string& what) {
    std::set<fs::path> files;
    for (const auto& file : opened) files.insert(normal(file));
    std::vector<fs::path> normal_folders;
    for (const auto& folder : folders) normal_folders.push_back(normal(folder));
    Gatherer gatherer(folders, files, allow_outside, what);
    std::vector<std::string> outside;
    for (const fs::path& file : files) {
        // Named from the folder that holds it most deeply (the shortest name): with nested
        // folders (<toolkit>/include and <toolkit>/include/cccl, a source folder above an -I
        // folder) that is the name an #include gives it.
        std::string include_name;
        fs::path root;
        for (const auto& folder : normal_folders) {
            const std::string name_here = below(file, folder);
            if (!name_here.empty() && (include_name.empty() || name_here.size() < include_name.size())) {
                include_name = name_here;
                root = folder;
            }
        }
        if (include_name.empty()) {
            if (!allow_outside) {
                outside.push_back(file.string());
                continue;
            }
            include_name = file.string();
            root = "/";
        }
        gatherer.add(include_name, file, root, {});
    }
    if (!outside.empty()) {
        std::string searched, list;
        for (const auto& folder : folders) searched += (searched.empty() ? "" : ", ") + folder.string();
        for (const auto& file : outside) list += (list.empty() ? "" : ", ") + file;
        throw InvalidArgumentError(
            what + ": " + std::to_string(outside.size()) + " header" +
            (outside.size() > 1 ? "s lie" : " lies") + " outside every include folder (" +
            (searched.empty() ? "none given" : searched) + "), refused: " + list +
            "; add the folder that holds it, or allow headers outside the folders "
            "(HeaderBundleOptions::allow_outside_folders, `cudacore bundle --allow-outside`)");
    }
    gatherer.follow();
    if (gatherer.name_entries_in_every_folder()) gatherer.follow();
    return gatherer.headers();
}

std::string describe_entry_problem(const std::string& name, const std::vector<fs::path>& folders) {
    // The first folder where the name exists in some form but is no readable file: say what it is.
    for (const auto& folder : folders) {
        const fs::path candidate = normal(folder / name);
        struct stat link {};
        if (::lstat(candidate.c_str(), &link) != 0) continue;
        struct stat target {};
        if (::stat(candidate.c_str(), &target) == 0) {
            if (S_ISREG(target.st_mode)) return {};
            return "'" + candidate.string() + "' is not a regular file";
        }
        const int error = errno;
        if (S_ISLNK(link.st_mode) && error == ELOOP)
            return "'" + candidate.string() + "' is a symbolic link loop (ELOOP: " +
                   std::strerror(error) + ")";
        if (S_ISLNK(link.st_mode) && error == ENOENT)
            return "'" + candidate.string() + "' is a symbolic link to nothing (dangling)";
        return "'" + candidate.string() + "' cannot be opened (" + std::strerror(error) + ")";
    }
    return {};
}

}  // namespace detail

}  // namespace cudacore
