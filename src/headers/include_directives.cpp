#include "headers/include_directives.hpp"

#include <algorithm>
#include <cctype>
#include <optional>

namespace cudacore::detail {
namespace {

using Wrappers = std::set<std::string, std::less<>>;

// Translation phase 2: a backslash at the end of a line joins it with the next one, anywhere
// (inside a directive's operand too). `offsets[i]` is where character i of the result lies in
// `text` (one more entry: the end).
struct SplicedText {
    std::string text;
    std::vector<std::size_t> offsets;
};

SplicedText splice_lines(std::string_view text) {
    SplicedText out;
    out.text.reserve(text.size());
    out.offsets.reserve(text.size() + 1);
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '\\') {
            std::size_t next = i + 1;
            if (next < text.size() && text[next] == '\r') ++next;
            if (next < text.size() && text[next] == '\n') {
                i = next;
                continue;
            }
        }
        out.text += text[i];
        out.offsets.push_back(i);
    }
    out.offsets.push_back(text.size());
    return out;
}

bool identifier_start(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_' ||
           static_cast<unsigned char>(c) >= 0x80;
}
bool identifier_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
           static_cast<unsigned char>(c) >= 0x80;
}

bool raw_string_prefix(std::string_view identifier) {
    return identifier == "R" || identifier == "LR" || identifier == "uR" || identifier == "UR" ||
           identifier == "u8R";
}

class Scanner {
public:
    Scanner(const SplicedText& text, const Wrappers& wrappers, ScanLexing lexing, IncludeDirectives& out)
        : text_(text.text), offsets_(text.offsets), wrappers_(wrappers), lexing_(lexing), out_(out) {}

    void run() {
        while (pos_ < text_.size()) {
            skip_blanks();
            if (peek() == '#' || (peek() == '%' && peek(1) == ':')) {  // %: is the digraph of #
                pos_ += peek() == '#' ? 1 : 2;
                directive();
            } else {
                tokens_to_end_of_line(nullptr);
            }
            if (peek() == '\n') ++pos_;
        }
    }

private:
    char peek(std::size_t ahead = 0) const {
        return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
    }

    // Spaces, tabs and comments; a block comment is one space (phase 3), even across lines.
    void skip_blanks() {
        while (pos_ < text_.size()) {
            const char c = text_[pos_];
            if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
                ++pos_;
            } else if (c == '/' && peek(1) == '/') {
                while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
            } else if (c == '/' && peek(1) == '*') {
                const std::size_t end = text_.find("*/", pos_ + 2);
                pos_ = end == std::string_view::npos ? text_.size() : end + 2;
            } else {
                return;
            }
        }
    }

    std::string_view identifier() {
        const std::size_t start = pos_;
        while (pos_ < text_.size() && identifier_char(text_[pos_])) ++pos_;
        return text_.substr(start, pos_ - start);
    }

    // The operand whose opening delimiter is at `open` and whose closing one is just before pos_.
    IncludeOperand operand(std::string name, char opening, std::size_t open, bool next, bool test) const {
        return {.name = std::move(name), .quoted = opening == '"', .begin = offsets_[open],
                .end = offsets_[pos_ - 1] + 1, .next = next, .test = test};
    }

    // Up to `close` on this line; nullopt (position unchanged) when the line ends first.
    std::optional<std::string> delimited(char close) {
        const std::size_t start = pos_ + 1;
        std::size_t end = start;
        while (end < text_.size() && text_[end] != close && text_[end] != '\n') ++end;
        if (end >= text_.size() || text_[end] != close) return std::nullopt;
        pos_ = end + 1;
        return std::string(text_.substr(start, end - start));
    }

    void skip_quoted(char quote) {
        ++pos_;
        while (pos_ < text_.size() && text_[pos_] != quote && text_[pos_] != '\n') {
            if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ++pos_;
            ++pos_;
        }
        if (peek() == quote) ++pos_;
    }

    // R"delim( ... )delim", which may span lines; pos_ is at the opening quote.
    void skip_raw_string() {
        const std::size_t open = text_.find('(', pos_);
        if (open == std::string_view::npos) {
            pos_ = text_.size();
            return;
        }
        const std::string close = ")" + std::string(text_.substr(pos_ + 1, open - pos_ - 1)) + "\"";
        const std::size_t end = text_.find(close, open);
        pos_ = end == std::string_view::npos ? text_.size() : end + close.size();
    }

    // A pp-number, with its digit separators (1'000) and exponent signs.
    void skip_number() {
        while (pos_ < text_.size()) {
            const char c = text_[pos_];
            if (identifier_char(c) || c == '.') {
                ++pos_;
            } else if (c == '\'' && lexing_.digit_separators && identifier_char(peek(1))) {
                out_.digit_separators = true;
                pos_ += 2;
            } else if ((c == '+' || c == '-') && pos_ > 0 &&
                       std::string_view("eEpP").find(text_[pos_ - 1]) != std::string_view::npos) {
                ++pos_;
            } else {
                return;
            }
        }
    }

    // The tokens up to the end of the logical line, looking for __has_include tests. `macro`:
    // the function-like macro whose body this is, or null.
    void tokens_to_end_of_line(const std::string* macro) {
        for (;;) {
            skip_blanks();
            if (pos_ >= text_.size()) return;
            const char c = peek();  // a NUL byte is a character like any other
            if (c == '\n') return;
            if (identifier_start(c)) {
                const std::size_t start = pos_;
                const std::string_view name = identifier();
                if (lexing_.raw_strings && raw_string_prefix(name) && peek() == '"') {
                    skip_raw_string();
                } else if (name == "__has_include" || name == "__has_include_next" ||
                           wrappers_.contains(name)) {
                    test(start, macro, name == "__has_include_next");
                }
            } else if (std::isdigit(static_cast<unsigned char>(c)) ||
                       (c == '.' && std::isdigit(static_cast<unsigned char>(peek(1))))) {
                skip_number();
            } else if (c == '"' || c == '\'') {
                skip_quoted(c);
            } else {
                ++pos_;
            }
        }
    }

    // After the name of a test: `(` then a literal operand, or something a macro makes.
    void test(std::size_t start, const std::string* macro, bool next) {
        skip_blanks();
        if (peek() != '(') {
            // `defined(__has_include)`, `#ifdef __has_include`; but in a macro's body the name
            // alone makes an alias (`#define HAS __has_include`), whose tests no scan can follow.
            if (in_define_) computed_test(start);
            return;
        }
        ++pos_;
        skip_blanks();
        const char c = peek();
        const std::size_t open = pos_;
        if (c == '"' || c == '<') {
            if (auto name = delimited(c == '"' ? '"' : '>')) {
                out_.operands.push_back(operand(std::move(*name), c, open, next, true));
                // In a function-like macro's body an angled operand is tokens, which its
                // parameters replace (`#define HAS(x) __has_include(<x>)`): its uses are tests too.
                if (macro != nullptr && c == '<') add_wrapper(*macro);
                return;
            }
        }
        if (macro != nullptr) {
            add_wrapper(*macro);
            return;
        }
        computed_test(start);
    }

    // `macro` makes __has_include tests wherever it is used.
    void add_wrapper(const std::string& macro) {
        if (std::find(out_.has_include_wrappers.begin(), out_.has_include_wrappers.end(), macro) ==
            out_.has_include_wrappers.end())
            out_.has_include_wrappers.push_back(macro);
    }

    // The line from `start` (a test's name), as the test whose operand a macro makes.
    void computed_test(std::size_t start) {
        const std::size_t end = text_.find('\n', start);
        out_.computed_has_includes.emplace_back(
            text_.substr(start, std::min<std::size_t>(end - start, 120)));
    }

    void directive() {
        skip_blanks();
        if (!identifier_start(peek())) {
            tokens_to_end_of_line(nullptr);
            return;
        }
        const std::string_view name = identifier();
        if (name == "include" || name == "include_next" || name == "import") {
            skip_blanks();
            const char c = peek();
            const std::size_t open = pos_;
            if (c == '"' || c == '<') {
                if (auto found = delimited(c == '"' ? '"' : '>')) {
                    out_.operands.push_back(operand(std::move(*found), c, open, name == "include_next", false));
                    tokens_to_end_of_line(nullptr);
                    return;
                }
            }
            std::size_t end = text_.find('\n', pos_);
            if (end == std::string_view::npos) end = text_.size();
            out_.computed_includes.emplace_back(
                "#" + std::string(name) + " " +
                std::string(text_.substr(pos_, std::min<std::size_t>(end - pos_, 120))));
            tokens_to_end_of_line(nullptr);
            return;
        }
        if (name == "define") {
            skip_blanks();
            if (!identifier_start(peek())) {
                tokens_to_end_of_line(nullptr);
                return;
            }
            const std::string macro(identifier());
            in_define_ = true;
            if (peek() != '(') {  // object-like: its tests are tests wherever it is used
                tokens_to_end_of_line(nullptr);
            } else {
                while (pos_ < text_.size() && text_[pos_] != ')' && text_[pos_] != '\n') ++pos_;
                if (peek() == ')') ++pos_;
                tokens_to_end_of_line(&macro);
            }
            in_define_ = false;
            return;
        }
        tokens_to_end_of_line(nullptr);
    }

    std::string_view text_;
    bool in_define_ = false;  // in the body of a #define
    const std::vector<std::size_t>& offsets_;
    std::size_t pos_ = 0;
    const Wrappers& wrappers_;
    const ScanLexing lexing_;
    IncludeDirectives& out_;
};

}  // namespace

IncludeDirectives scan_include_directives(std::string_view text, const Wrappers& wrappers, ScanLexing lexing) {
    const SplicedText spliced = splice_lines(text);
    IncludeDirectives out;
    Scanner(spliced, wrappers, lexing, out).run();
    return out;
}

bool same_scan(const IncludeDirectives& a, const IncludeDirectives& b) {
    return std::equal(a.operands.begin(), a.operands.end(), b.operands.begin(), b.operands.end(),
                      [](const IncludeOperand& x, const IncludeOperand& y) { return x.same_place(y); }) &&
           a.computed_includes == b.computed_includes && a.computed_has_includes == b.computed_has_includes &&
           a.has_include_wrappers == b.has_include_wrappers;
}

}  // namespace cudacore::detail
