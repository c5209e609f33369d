// Exact cache hits for C++ programs: the names a file asks for (include_directives), where a
// compile searches (include_lookups), and the property that matters: random include trees,
// changed between two compiles, never give a cache hit that differs from a fresh compile.
#include "test_support.hpp"

#include "cache/cached_entry.hpp"
#include "headers/include_directives.hpp"
#include "headers/include_lookups.hpp"

#include "cudacore/cached_compile.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/memory_program_cache.hpp"
#include "cudacore/program.hpp"
#include "cudacore/warnings.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>

namespace {

using namespace cudacore;
using detail::IncludeOperand;
namespace fs = std::filesystem;

std::vector<IncludeOperand> operands_of(const std::string& text,
                                        std::set<std::string, std::less<>> wrappers = {}) {
    return detail::scan_include_directives(text, wrappers).operands;
}

TEST(IncludeDirectives, ListsIncludesAndHasIncludeTestsThroughTheTranslationPhases) {
    const std::string text =
        "#include \"a.h\"\n"
        "  #  include <b/c.h> // trailing comment\n"
        "#include /* between */ \"d.h\"\n"
        "#inc\\\nlude \"spliced.h\"\n"
        "#include_next <next.h>\n"
        "int n = 1'000'000; char q = '\"';\n"  // a digit separator and a quote in a char literal
        "#if defined(__has_include) && __has_include(\"opt.h\") || __has_include( <sys.h> )\n"
        "#endif\n"
        "const char* s = R\"x(\n#include \"in_raw_string.h\"\n)x\";\n"
        "/* #include \"in_comment.h\"\n*/\n"
        "// #include \"in_line_comment.h\"\n"
        "const char* t = \"#include <in_string.h>\";\n"
        "#define HAS_FOO __has_include(<foo.h>)\n";
    const std::vector<IncludeOperand> expected{{"a.h", true},     {"b/c.h", false},
                                               {"d.h", true},     {"spliced.h", true},
                                               {"next.h", false}, {"opt.h", true},
                                               {"sys.h", false},  {"foo.h", false}};
    EXPECT_EQ(operands_of(text), expected);
}

TEST(IncludeDirectives, FollowsMacrosThatWrapHasIncludeAndFlagsNamesMadeByMacros) {
    // As CCCL does: the wrapper is defined in one file and used in another.
    const auto definer = detail::scan_include_directives(
        "#define MY_HAS_INCLUDE(_X) __has_include(_X)\n", {});
    ASSERT_EQ(definer.has_include_wrappers, std::vector<std::string>{"MY_HAS_INCLUDE"});
    EXPECT_TRUE(definer.computed_has_includes.empty());
    const std::string user = "#if MY_HAS_INCLUDE(<nvtx3/nvtx3.hpp> )\n#endif\n";
    EXPECT_TRUE(operands_of(user).empty());  // not known as a wrapper yet
    EXPECT_EQ(operands_of(user, {"MY_HAS_INCLUDE"}),
              (std::vector<IncludeOperand>{{"nvtx3/nvtx3.hpp", false}}));

    const auto computed = detail::scan_include_directives(
        "#define HEADER \"x.h\"\n#include HEADER\n#if __has_include(HEADER)\n#endif\n", {});
    ASSERT_EQ(computed.computed_includes.size(), 1u);
    EXPECT_NE(computed.computed_includes[0].find("HEADER"), std::string::npos);
    ASSERT_EQ(computed.computed_has_includes.size(), 1u);
}

// Each operand's place in the text as given (line splices and all), so that it can be replaced
// there; the digraph %: is a #.
TEST(IncludeDirectives, KnowsWhereEachOperandIsAndReadsTheDigraph) {
    const std::string text = "%:include \"a.h\"\n#include <b\\\n.h>\n#if __has_include_next(<c.h>)\n#endif\n";
    const std::vector<IncludeOperand> operands = operands_of(text);
    ASSERT_EQ(operands.size(), 3u);
    EXPECT_EQ(text.substr(operands[0].begin, operands[0].end - operands[0].begin), "\"a.h\"");
    EXPECT_EQ(text.substr(operands[1].begin, operands[1].end - operands[1].begin), "<b\\\n.h>");
    EXPECT_EQ(operands[1].name, "b.h");
    EXPECT_TRUE(operands[2].test);
    EXPECT_TRUE(operands[2].next);
    EXPECT_FALSE(operands[0].test || operands[0].next || operands[1].next);
}

// Where the standard decides how text reads: raw strings from C++11, digit separators from C++14.
// A scan told there are none finds what they would hide; a digit separator read is reported.
TEST(IncludeDirectives, ReadsRawStringsAndDigitSeparatorsAsTheStandardSays) {
    const std::string raw = "const char* s = R\"x(\";\n#include \"shown.h\"\n//)x\";\n";
    EXPECT_TRUE(operands_of(raw).empty());
    EXPECT_EQ(detail::scan_include_directives(raw, {}, {.raw_strings = false}).operands,
              (std::vector<IncludeOperand>{{"shown.h", true}}));
    const std::string separated = "int x = 1'2 /*\n#include \"hidden.h\"\n*/\n";
    const detail::IncludeDirectives as_number = detail::scan_include_directives(separated, {});
    EXPECT_TRUE(as_number.digit_separators);
    EXPECT_TRUE(as_number.operands.empty());
    const detail::IncludeDirectives as_quote =
        detail::scan_include_directives(separated, {}, {.digit_separators = false});
    EXPECT_FALSE(as_quote.digit_separators);
    EXPECT_EQ(as_quote.operands, (std::vector<IncludeOperand>{{"hidden.h", true}}));
    EXPECT_FALSE(detail::same_scan(as_number, as_quote));
    EXPECT_TRUE(detail::same_scan(as_number, detail::scan_include_directives(separated, {})));
}

// A NUL byte is a character like any other: the scan goes on past it (it once stopped there and
// never moved again).
TEST(IncludeDirectives, ANulByteIsReadPast) {
    const char text[] = "int a;\0 b\n#include \"after.h\"\n\0";
    EXPECT_EQ(operands_of(std::string(text, sizeof text - 1)), (std::vector<IncludeOperand>{{"after.h", true}}));
}

TEST(IncludeLookups, SearchFoldersAreAbsoluteAndNormal) {
    const std::string cwd = fs::current_path().string();
    const detail::IncludeSearch search = detail::include_search(
        "kernels/k.cu", {"-I/usr//include/./x/", "--include-path=rel/../inc", "-I", "/plain/dir",
                         "-I.", "--pre-include=pre.h"});
    EXPECT_EQ(search.main_directory, cwd + "/kernels");
    EXPECT_EQ(search.directories,
              (std::vector<std::string>{"/usr/include/x", cwd + "/inc", "/plain/dir", cwd}));
    EXPECT_EQ(search.pre_includes, std::vector<std::string>{"pre.h"});
    EXPECT_EQ(detail::include_search("k.cu", {}).main_directory, cwd);
    EXPECT_EQ(detail::include_search("/abs/k.cu", {}).main_directory, "/abs");
}

TEST(IncludeLookups, AProgramWhoseLookupsCannotBeKnownIsCompiledNotCached) {
    test::TempDir dir;
    test::write_file(dir.path() / "x.h", "#define VALUE 5\n");
    ProgramOptions options;
    options.arch = "sm_90";
    options.name = (dir.path() / "k.cu").string();
    options.toolkit_include_path = false;
    const std::string source = "#define HEADER \"x.h\"\n#include HEADER\n"
                               "extern \"C\" __global__ void k(int* o) { *o = VALUE; }\n";
    MemoryProgramCache cache;
    test::WarningLog warnings;
    for (int round = 0; round < 2; ++round) {
        Program program(source, SourceType::cxx, options);
        EXPECT_NE(compile_cached(program, CodeType::ptx, {}, {.cache = &cache}).code().find("5;"),
                  std::string_view::npos);
    }
    EXPECT_EQ(cache.stats().hits, 0u);
    EXPECT_EQ(cache.stats().insertions, 0u);
    ASSERT_EQ(warnings.seen.size(), 2u);
    EXPECT_EQ(warnings.seen[0].kind, WarningKind::not_cached);
    EXPECT_NE(warnings.seen[0].message.find("includes a header named by a macro"), std::string::npos)
        << warnings.seen[0].message;
}

// ---- The property: random include trees, changed between two compiles. ----

// A tree of headers in the source's folder and three -I folders (each with a sub/ folder), three
// levels of names; each file includes names of the next level, quoted or angled, most of them
// guarded by __has_include, and adds what it found into a constant the kernel stores.
class RandomTree {
public:
    RandomTree(const fs::path& root, std::mt19937& random) : root_(root), random_(random) {
        for (const char* folder : {"src", "i1", "i2", "i3"}) {
            folders_.push_back(root_ / folder);
            folders_.push_back(root_ / folder / "sub");
        }
        for (const auto& folder : folders_) fs::create_directories(folder);
        for (const auto& folder : folders_)
            for (const auto& name : all_names())
                if (chance(0.3)) write(folder / name, name);
        test::write_file(root_ / "src" / "k.cu", main_source());
    }

    ProgramOptions options() const {
        ProgramOptions options;
        options.arch = "sm_90";
        options.name = (root_ / "src" / "k.cu").string();
        options.include_path = {(root_ / "i1").string(), (root_ / "i2").string(),
                                (root_ / "i3").string()};
        options.toolkit_include_path = false;
        options.pch = false;
        return options;
    }
    std::string source() const { return test::read_file(root_ / "src" / "k.cu"); }
    std::string dump() const {
        std::string out;
        for (const auto& entry : fs::recursive_directory_iterator(root_))
            if (entry.is_regular_file())
                out += "== " + entry.path().string() + "\n" + test::read_file(entry.path());
        return out;
    }

    // Creates, rewrites or removes one to three headers; returns what it did.
    std::string change() {
        std::string done;
        const int changes = 1 + static_cast<int>(random_() % 3);
        for (int i = 0; i < changes; ++i) {
            const fs::path folder = folders_[random_() % folders_.size()];
            const std::vector<std::string> names = all_names();
            const std::string name = names[random_() % names.size()];
            const fs::path path = folder / name;
            if (fs::exists(path) && chance(0.5)) {
                fs::remove(path);
                done += " removed " + path.lexically_relative(root_).string();
            } else {
                done += (fs::exists(path) ? " rewrote " : " created ") +
                        path.lexically_relative(root_).string();
                write(path, name);
            }
        }
        return done;
    }

private:
    static const std::vector<std::vector<std::string>>& levels() {
        static const std::vector<std::vector<std::string>> names{
            {"a.h", "b.h"}, {"c.h", "sub/d.h"}, {"e.h", "f.h"}};
        return names;
    }
    static std::vector<std::string> all_names() {
        std::vector<std::string> names;
        for (const auto& level : levels()) names.insert(names.end(), level.begin(), level.end());
        return names;
    }
    static std::string macro_of(const std::string& name) {
        std::string macro = "V_";
        for (char c : name) macro += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
        return macro;
    }
    bool chance(double p) { return std::uniform_real_distribution<>(0, 1)(random_) < p; }

    // Includes of `names` (guarded, mostly), each giving a constexpr int named `prefix`N.
    std::string includes(const std::vector<std::string>& names, const std::string& prefix,
                         std::string& sum) {
        std::string text;
        for (std::size_t i = 0; i < names.size(); ++i) {
            if (chance(0.4)) continue;
            const std::string& name = names[i];
            const bool quoted = chance(0.5);
            const std::string operand = quoted ? "\"" + name + "\"" : "<" + name + ">";
            const std::string variable = prefix + std::to_string(i);
            if (chance(0.85)) {
                text += "#if __has_include(" + operand + ")\n#include " + operand +
                        "\nconstexpr int " + variable + " = " + macro_of(name) +
                        ";\n#else\nconstexpr int " + variable + " = " +
                        std::to_string(1 + random_() % 9) + ";\n#endif\n";
            } else {
                text += "#include " + operand + "\nconstexpr int " + variable + " = " +
                        macro_of(name) + ";\n";
            }
            sum += " + " + std::to_string(3 + 4 * i) + " * " + variable;
        }
        return text;
    }

    void write(const fs::path& path, const std::string& name) {
        std::size_t level = 0;
        while (std::find(levels()[level].begin(), levels()[level].end(), name) ==
               levels()[level].end())
            ++level;
        const std::string prefix = "s" + std::to_string(next_file_++) + "_";
        std::string sum = std::to_string(1 + random_() % 9);
        std::string text = "#pragma once\n";
        if (level + 1 < levels().size()) text += includes(levels()[level + 1], prefix, sum);
        text += "#undef " + macro_of(name) + "\n#define " + macro_of(name) + " (" + sum + ")\n";
        fs::create_directories(path.parent_path());
        test::write_file(path, text);
    }

    std::string main_source() {
        std::string sum = "0";
        std::string text = includes(levels()[0], "m", sum);
        return text + "extern \"C\" __global__ void k(int* out) { *out = " + sum + "; }\n";
    }

    fs::path root_;
    std::mt19937& random_;
    std::vector<fs::path> folders_;
    int next_file_ = 0;
};

// The PTX, or "error" when the compile fails.
std::string compiled(const std::function<ObjectCode()>& compile) {
    try {
        return std::string(compile().code());
    } catch (const CompileError&) {
        return "error";
    }
}

TEST(IncludeLookups, RandomIncludeTreesNeverGiveAHitThatDiffersFromAFreshCompile) {
    constexpr int trees = 40;
    // CUDACORE_TEST_SEED picks other trees (the failure messages name the tree).
    const char* seed = std::getenv("CUDACORE_TEST_SEED");
    std::mt19937 random(seed ? std::stoul(seed) : 20240611u);
    test::TempDir dir;
    MemoryProgramCache cache;
    test::WarningLog warnings;  // a compile that is not cached says why
    auto last_warning = [&] { return warnings.seen.empty() ? std::string() : warnings.seen.back().message; };
    int hits_after_change = 0, changed_results = 0;
    for (int tree_index = 0; tree_index < trees; ++tree_index) {
        RandomTree tree(dir.path() / std::to_string(tree_index), random);
        const std::string source = tree.source();
        auto program = [&] { return Program(source, SourceType::cxx, tree.options()); };
        Program first = program();
        // The trees name no path and no clock: declared, so a miss compiles once (no check compile,
        // which CompileSnapshot and PathIndependentKeys hold to its rules); the key is the same.
        const std::string before = compiled([&] {
            return compile_cached(first, CodeType::ptx, {}, {.cache = &cache, .paths_and_clock_do_not_matter = true});
        });
        if (before != "error") {
            // Exact keys must still hit when nothing changed, in this process and in another.
            EXPECT_TRUE(find_cached(program(), CodeType::ptx, {}, {.cache = &cache})) << "tree " << tree_index << " " << last_warning();
            // The cached compile is the plain compile of the same files.
            Program plain = program();
            EXPECT_EQ(compiled([&] { return plain.compile(CodeType::ptx); }), before) << "tree " << tree_index;
        }
        const std::string changes = tree.change();

        // The Program that compiled (its memo) and a new one.
        const std::optional<ObjectCode> remembered = find_cached(first, CodeType::ptx, {}, {.cache = &cache});
        const std::optional<ObjectCode> afresh = find_cached(program(), CodeType::ptx, {}, {.cache = &cache});
        EXPECT_EQ(remembered.has_value(), afresh.has_value()) << "tree " << tree_index;
        Program fresh_program = program();
        const std::string fresh = compiled([&] { return fresh_program.compile(CodeType::ptx); });
        for (const auto* hit : {&remembered, &afresh}) {
            if (!*hit) continue;
            EXPECT_EQ(std::string((*hit)->code()), fresh)
                << "tree " << tree_index << ": a cache hit differs from a fresh compile after"
                << changes << "\nsource:\n" << source << tree.dump();
        }
        hits_after_change += remembered.has_value();
        changed_results += fresh != before;
    }
    // Both outcomes must be common, or the property says little.
    EXPECT_GE(hits_after_change, trees / 5);
    EXPECT_GE(changed_results, trees / 20);
    std::printf("%d trees: %d hits after a change, %d changes of the compiled code\n", trees,
                hits_after_change, changed_results);
}

}  // namespace
