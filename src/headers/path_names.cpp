#include "headers/path_names.hpp"

#include "headers/file_view.hpp"
#include "support/hex.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <mutex>

namespace cudacore::detail {
namespace {

bool identifier_start(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}

bool identifier_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

bool raw_string_prefix(std::string_view text, std::size_t quote) {
    for (std::string_view prefix : {"u8R", "LR", "uR", "UR", "R"}) {
        if (quote >= prefix.size() && text.substr(quote - prefix.size(), prefix.size()) == prefix &&
            (quote == prefix.size() || !identifier_char(text[quote - prefix.size() - 1])))
            return true;
    }
    return false;
}

// The text with its line splices joined and each comment made one space, as translation phases
// 2 and 3 do. Literals are kept whole, their names counted: a literal taken for code only counts
// more names, while a comment is only ever taken where no literal is open.
std::string without_comments(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\\' && i + 1 < text.size() && text[i + 1] == '\n') {
            ++i;
        } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
            while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
            out += ' ';
        } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
            const std::size_t end = text.find("*/", i + 2);
            const std::size_t stop = end == std::string_view::npos ? text.size() : end + 2;
            out += ' ';  // one space, even across lines (a directive goes on after it)
            i = stop - 1;
        } else if (c == '"' && raw_string_prefix(text, i)) {
            const std::size_t open = text.find('(', i);
            const std::string close =
                open == std::string_view::npos ? "" : ")" + std::string(text.substr(i + 1, open - i - 1)) + "\"";
            const std::size_t end = open == std::string_view::npos ? std::string_view::npos : text.find(close, open);
            const std::size_t stop = end == std::string_view::npos ? text.size() : end + close.size();
            out.append(text.substr(i, stop - i));
            i = stop - 1;
        } else if (c == '"' || c == '\'') {
            out += c;
            for (++i; i < text.size() && text[i] != c && text[i] != '\n'; ++i) {
                if (text[i] == '\\' && i + 1 < text.size()) out += text[i++];
                out += text[i];
            }
            if (i < text.size()) out += text[i];
        } else {
            out += c;
        }
    }
    return out;
}

// The logical lines of `text` without comments.
std::vector<std::string> logical_lines(std::string_view text) {
    std::vector<std::string> lines(1);
    for (const char c : without_comments(text)) {
        if (c == '\n') lines.emplace_back();
        else lines.back().push_back(c);
    }
    return lines;
}

// Whether `line` is an #include, #include_next or #import: its operand is a file's name.
bool include_line(std::string_view line) {
    std::size_t i = line.find_first_not_of(" \t");
    if (i == std::string_view::npos || line[i] != '#') return false;
    i = line.find_first_not_of(" \t", i + 1);
    if (i == std::string_view::npos) return false;
    const std::string_view word = line.substr(i);
    return (word.starts_with("include") || word.starts_with("import")) &&
           (word.find_first_of("<\"") != std::string_view::npos);
}

void sort_unique(std::vector<std::string>& names) {
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
}

// The NAME of "#  define NAME..." (npos-free: empty when the line is no #define), and where its
// body starts.
std::pair<std::string, std::size_t> defined_macro(std::string_view line) {
    std::size_t i = line.find_first_not_of(" \t");
    if (i == std::string_view::npos || line[i] != '#') return {};
    i = line.find_first_not_of(" \t", i + 1);
    if (i == std::string_view::npos || line.substr(i, 6) != "define") return {};
    i = line.find_first_not_of(" \t", i + 6);
    if (i == std::string_view::npos || !identifier_start(line[i])) return {};
    std::size_t end = i;
    while (end < line.size() && identifier_char(line[end])) ++end;
    return {std::string(line.substr(i, end - i)), end};
}

}  // namespace

PathNames scan_path_names(std::string_view text) {
    PathNames names;
    char previous = '\n', before_previous = '\n';  // the last two characters that are not blank
    for (const std::string& line : logical_lines(text)) {
        if (include_line(line)) continue;
        auto [macro, body] = defined_macro(line);
        std::vector<std::string> body_names;
        for (std::size_t i = macro.empty() ? 0 : body; i < line.size();) {
            const char c = line[i];
            if (identifier_start(c) && (i == 0 || !identifier_char(line[i - 1]))) {
                std::size_t end = i;
                while (end < line.size() && identifier_char(line[end])) ++end;
                std::string name = line.substr(i, end - i);
                static constexpr std::string_view compound = "=!<>+-*/%&|^";
                if (macro.empty() && previous == '=' &&
                    compound.find(before_previous) == std::string_view::npos)
                    names.assigned.push_back(name);
                if (!macro.empty()) body_names.push_back(name);
                names.identifiers.push_back(std::move(name));
                before_previous = previous;
                previous = 'a';
                i = end;
                continue;
            }
            if (c != ' ' && c != '\t') {
                before_previous = previous;
                previous = c;
            }
            ++i;
        }
        if (!macro.empty()) {
            names.identifiers.push_back(macro);
            sort_unique(body_names);
            names.macros.emplace_back(std::move(macro), std::move(body_names));
        }
    }
    sort_unique(names.identifiers);
    sort_unique(names.assigned);
    return names;
}

bool names_path(std::string_view identifier) {
    if (identifier == "static_assert") return false;
    std::string lower(identifier);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    for (std::string_view part : {"assert", "source_location", "__file", "_file__", "builtin_file"})
        if (lower.find(part) != std::string::npos) return true;
    return false;
}

std::shared_ptr<const PathNames> path_names_of_file(const std::string& path, const std::string& digest) {
    static auto* mutex = new std::mutex;  // never destroyed, like the digests
    static auto* known = new std::map<std::string, std::shared_ptr<const PathNames>>;
    {
        std::lock_guard lock(*mutex);
        if (auto it = known->find(digest); it != known->end()) return it->second;
    }
    const std::optional<std::string> bytes = read_whole_file(path);
    if (!bytes) return nullptr;
    unsigned char sha[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    if (EVP_Digest(bytes->data(), bytes->size(), sha, &size, EVP_sha256(), nullptr) != 1 ||
        hex_of(sha, size) != digest)
        return nullptr;  // edited since the view read it: not the bytes the key names
    auto names = std::make_shared<const PathNames>(scan_path_names(*bytes));
    std::lock_guard lock(*mutex);
    return known->emplace(digest, std::move(names)).first->second;
}

}  // namespace cudacore::detail
