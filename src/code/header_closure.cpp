#include "code/header_closure.hpp"

#include "cudacore/errors.hpp"
#include "code/include_directives.hpp"
#include "support/atomic_file.hpp"

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
    Gatherer(const std::vector<fs::path>& folders, const std::string& what) : what_(what) {
        for (const auto& folder : folders) folders_.push_back(normal(folder));
    }

    void add(const std::string& name, const fs::path& file, const fs::path& root,
             const std::string& included_by) {
        const fs::path path = normal(file);
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

    // Looks `name` up in the folders, in order; false when no folder holds it.
    bool add_searched(const std::string& name, const std::string& included_by) {
        for (const auto& folder : folders_) {
            const fs::path candidate = folder / name;
            if (is_file(candidate)) {
                add(name, candidate, folder, included_by);
                return true;
            }
        }
        return false;
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
    void resolve(std::size_t index, const IncludeOperand& operand) {
        const std::string& name = operand.name;
        if (name.empty()) return;
        const std::string includer = nodes_[index].name;
        if (name.front() == '/') {  // an absolute path is opened as it is
            if (is_file(name)) add(name, name, "/", includer);
            return;
        }
        if (operand.quoted) {
            // The including header's own folder first, as the preprocessor looks.
            const fs::path candidate = normal(nodes_[index].file.parent_path() / name);
            if (is_file(candidate)) {
                fs::path root = nodes_[index].root;
                std::string canonical = below(candidate, root);
                for (std::size_t f = 0; canonical.empty() && f < folders_.size(); ++f) {
                    canonical = below(candidate, folders_[f]);
                    root = folders_[f];
                }
                if (canonical.empty()) {
                    throw InvalidArgumentError(
                        what_ + ": '" + includer + "' includes \"" + name + "\", which is " +
                        candidate.string() + ", outside every include folder: add its folder");
                }
                add(canonical, candidate, root, includer);
                if (canonical != name) nodes_[index].rewrites.emplace(name, canonical);
                return;
            }
        }
        add_searched(name, includer);  // a name found nowhere is left out (see the header)
    }

    std::string what_;
    std::vector<fs::path> folders_;
    std::vector<Node> nodes_;
    std::map<std::string, std::size_t> by_name_;
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

std::vector<BundledHeader> gather_headers(const std::vector<EntryHeader>& entries,
                                          const std::vector<fs::path>& folders,
                                          const std::string& what) {
    Gatherer gatherer(folders, what);
    for (const EntryHeader& entry : entries) {
        if (!entry.file.empty()) {
            gatherer.add(entry.name, entry.file, entry.root, {});
        } else if (!gatherer.add_searched(entry.name, {})) {
            std::string searched;
            for (const auto& folder : folders) searched += (searched.empty() ? "" : ", ") + folder.string();
            throw InvalidArgumentError(what + ": the header '" + entry.name +
                                       "' is in none of the include folders (" +
                                       (searched.empty() ? "none given" : searched) + ")");
        }
    }
    gatherer.follow();
    return gatherer.headers();
}

}  // namespace detail

namespace {

// "<a.h>" and "\"a.h\"" as "a.h".
std::string bare_name(const std::string& entry) {
    if (entry.size() >= 2 && ((entry.front() == '<' && entry.back() == '>') ||
                              (entry.front() == '"' && entry.back() == '"')))
        return entry.substr(1, entry.size() - 2);
    return entry;
}

}  // namespace

HeaderBundle HeaderBundle::from_include_folders(const std::vector<std::string>& entry_headers,
                                                const std::vector<std::filesystem::path>& include_folders,
                                                std::string name) {
    const std::string what = "HeaderBundle '" + name + "'";
    std::vector<detail::EntryHeader> entries;
    for (const auto& entry : entry_headers) {
        std::string bare = bare_name(entry);
        if (bare.empty()) throw InvalidArgumentError(what + ": an entry header has an empty name");
        entries.push_back({std::move(bare), {}, {}});
    }
    return from_headers(detail::gather_headers(entries, include_folders, what), std::move(name));
}

HeaderBundle HeaderBundle::from_headers_read(const std::vector<std::string>& headers_read,
                                             const std::vector<std::filesystem::path>& include_folders,
                                             std::string name) {
    const std::string what = "HeaderBundle '" + name + "'";
    std::vector<detail::EntryHeader> entries;
    for (const auto& header : headers_read) {
        const std::filesystem::path file = detail::normal(header);
        // Named from the folder that holds it most deeply (the shortest name): with nested
        // folders (the toolkit's include/ and include/cccl/, a source folder above an -I
        // folder) that is the name an #include gives it.
        std::string include_name;
        std::filesystem::path root;
        for (const auto& folder : include_folders) {
            const std::string name_here = detail::below(file, detail::normal(folder));
            if (!name_here.empty() && (include_name.empty() || name_here.size() < include_name.size())) {
                include_name = name_here;
                root = folder;
            }
        }
        if (include_name.empty()) {
            std::string searched;
            for (const auto& folder : include_folders)
                searched += (searched.empty() ? "" : ", ") + folder.string();
            throw InvalidArgumentError(what + ": the header " + file.string() +
                                       " lies in none of the include folders (" +
                                       (searched.empty() ? "none given" : searched) + ")");
        }
        entries.push_back({std::move(include_name), file, root});
    }
    return from_headers(detail::gather_headers(entries, include_folders, what), std::move(name));
}

}  // namespace cudacore
