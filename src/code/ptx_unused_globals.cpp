#include "code/ptx_unused_globals.hpp"

#include <cctype>
#include <optional>
#include <unordered_set>

namespace cudacore::detail {
namespace {

bool name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$'; }
bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$'; }

// The line without its // comment.
std::string_view code_of(std::string_view line) {
    const std::size_t comment = line.find("//");
    return comment == std::string_view::npos ? line : line.substr(0, comment);
}

// Calls `take` with each identifier of `code` that may name a variable: not a directive or a
// type (after '.'), not a register (after '%'), not a number.
template <class Take>
void for_each_name(std::string_view code, Take take) {
    std::size_t i = 0;
    while (i < code.size()) {
        if (!name_char(code[i])) {
            ++i;
            continue;
        }
        const std::size_t begin = i;
        while (i < code.size() && name_char(code[i])) ++i;
        const bool after_mark = begin > 0 && (code[begin - 1] == '.' || code[begin - 1] == '%');
        if (!after_mark && name_start(code[begin])) take(code.substr(begin, i - begin));
    }
}

std::string_view first_word(std::string_view code) {
    const std::size_t begin = code.find_first_not_of(" \t\r");
    if (begin == std::string_view::npos) return {};
    const std::size_t end = code.find_first_of(" \t\r", begin);
    return code.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin);
}

// A module-scope declaration that may be removed: its bytes, the variable it declares, the names
// its initializer uses.
struct Declaration {
    std::size_t begin = 0;
    std::size_t end = 0;
    std::string name;
    std::vector<std::string> uses;
};

// The declaration made of `code` (its lines' code, comments removed), or nullopt when it is not
// one variable of a form read here (a list, text after the ';').
std::optional<Declaration> parse_declaration(std::string_view code) {
    const std::size_t semicolon = code.find(';');
    if (semicolon == std::string_view::npos ||
        code.find_first_not_of(" \t\r\n", semicolon + 1) != std::string_view::npos)
        return std::nullopt;
    const std::size_t equals = code.find('=');
    const std::string_view head = code.substr(0, std::min(equals, semicolon));
    if (head.find(',') != std::string_view::npos) return std::nullopt;
    Declaration declaration;
    for_each_name(head, [&](std::string_view name) { declaration.name = name; });
    if (declaration.name.empty()) return std::nullopt;
    if (equals != std::string_view::npos && equals < semicolon)
        for_each_name(code.substr(equals + 1, semicolon - equals - 1),
                      [&](std::string_view name) { declaration.uses.emplace_back(name); });
    return declaration;
}

}  // namespace

std::string without_unused_globals(std::string_view ptx, const SymbolMap& symbols) {
    if (ptx.find("/*") != std::string_view::npos) return std::string(ptx);
    std::vector<Declaration> declarations;
    std::unordered_set<std::string> used;  // a name expression's variable stays, used or not
    for (const auto& [expression, lowered] : symbols) used.insert(lowered);
    auto note_uses = [&](std::string_view code) { for_each_name(code, [&](std::string_view name) { used.emplace(name); }); };
    long depth = 0;
    std::size_t at = 0;
    auto next_line = [&](std::size_t from) {
        const std::size_t newline = ptx.find('\n', from);
        return newline == std::string_view::npos ? ptx.size() : newline + 1;
    };
    while (at < ptx.size()) {
        std::size_t end = next_line(at);
        const std::string_view code = code_of(ptx.substr(at, end - at));
        const std::string_view word = first_word(code);
        if (depth == 0 && (word == ".global" || word == ".const")) {
            std::string statement(code);
            while (statement.find(';') == std::string::npos) {
                if (end >= ptx.size()) return std::string(ptx);  // unterminated: not read here
                const std::size_t line_end = next_line(end);
                statement += code_of(ptx.substr(end, line_end - end));
                end = line_end;
            }
            if (std::optional<Declaration> declaration = parse_declaration(statement)) {
                declaration->begin = at;
                declaration->end = end;
                declarations.push_back(std::move(*declaration));
            } else {
                note_uses(statement);
            }
            at = end;
            continue;
        }
        note_uses(code);
        for (const char c : code) depth += c == '{' ? 1 : c == '}' ? -1 : 0;
        at = end;
    }
    // A kept variable keeps those its initializer names (a pointer to another global).
    for (bool grew = true; grew;) {
        grew = false;
        for (const Declaration& declaration : declarations) {
            if (!used.contains(declaration.name)) continue;
            for (const std::string& name : declaration.uses) grew |= used.insert(name).second;
        }
    }
    std::string out;
    out.reserve(ptx.size());
    std::size_t copied = 0;
    for (const Declaration& declaration : declarations) {
        if (used.contains(declaration.name)) continue;
        out.append(ptx.substr(copied, declaration.begin - copied));
        copied = declaration.end;
    }
    out.append(ptx.substr(copied));
    return out;
}

}  // namespace cudacore::detail
