// The names a source file asks the preprocessor to look up: the operands of #include,
// #include_next, #import and of __has_include / __has_include_next tests (directly or through a
// function-like macro that passes its argument to them, such as CCCL's _CCCL_HAS_INCLUDE).
// compile_cached uses them to know every place a compile looked for a header, found or not
// (headers/include_lookups.hpp); header bundles use them to gather the headers an entry header
// needs (headers/header_closure.hpp). Internal.
//
// The scan follows the translation phases that matter here (line splices, comments, string and
// character literals, raw strings, digit separators, the digraph %: for #) but evaluates no
// conditional: a name under `#if 0` is listed too. Listing too much only costs a stat per name and
// folder. Where the standard decides how text is read (raw strings from C++11, digit separators
// from C++14), ScanLexing says which reading to follow.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace cudacore::detail {

struct IncludeOperand {
    std::string name;
    bool quoted = false;  // "name" (searched from the including file's folder first), else <name>
    // Where the operand, delimiters included, lies in the scanned text (offsets into the text as
    // given, line splices and all), so that it can be replaced there.
    std::size_t begin = 0;
    std::size_t end = 0;
    bool next = false;  // #include_next or __has_include_next: searched after the includer's folder
    bool test = false;  // a __has_include test (directly or through a wrapper), not an #include
    // The same name looked up the same way (where it lies does not matter).
    bool operator==(const IncludeOperand& other) const {
        return name == other.name && quoted == other.quoted;
    }
    // The same operand at the same place.
    bool same_place(const IncludeOperand& other) const {
        return *this == other && begin == other.begin && end == other.end && next == other.next && test == other.test;
    }
};

struct IncludeDirectives {
    // Every literal operand, in order of appearance (repeats kept).
    std::vector<IncludeOperand> operands;
    // The text of each #include whose operand a macro makes (#include MACRO): what it names is
    // known only once the preprocessor ran.
    std::vector<std::string> computed_includes;
    // The text of each __has_include test whose operand a macro makes, outside the definition of
    // a wrapper macro, and of each macro body that names the test without its operand (an alias:
    // `#define HAS __has_include`).
    std::vector<std::string> computed_has_includes;
    // Function-like macros defined here that hand an operand they are given to __has_include (or
    // to a wrapper): their uses are tests too.
    std::vector<std::string> has_include_wrappers;
    // A ' was read as a digit separator (1'000): NVRTC reads it so in a group it keeps and, as a
    // character literal's quote, in a group it skips.
    bool digit_separators = false;
};

// Whether two scans of one text found the same: every operand at the same place, the same
// computed includes and tests, the same wrappers.
bool same_scan(const IncludeDirectives& a, const IncludeDirectives& b);

// How the scan reads text that the C++ standard reads in more than one way.
struct ScanLexing {
    bool raw_strings = true;       // R"x(...)x" is one literal (C++11 on)
    bool digit_separators = true;  // 1'000 is one number (C++14 on, outside skipped groups)
};

// Scans one file. `wrappers`: the wrapper macros known so far (from every file of the compile:
// one file may define what another uses); run again with the ones found until none is new.
IncludeDirectives scan_include_directives(std::string_view text,
                                          const std::set<std::string, std::less<>>& wrappers,
                                          ScanLexing lexing = {});

}  // namespace cudacore::detail
