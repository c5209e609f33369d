// Exact cache hits for C++ programs: the names a file asks for (include_directives), the places
// a compile looked for them (include_lookups), and the property that matters: random include
// trees, changed between two compiles, never give a cache hit that differs from a fresh compile.
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

// include_lookups over files in memory: path -> contents.
detail::IncludeLookups lookups_of(const detail::IncludeSearch& search, const std::string& source,
                                  const std::map<std::string, std::string>& files,
                                  const std::vector<std::string>& reported = {},
                                  const std::vector<std::string>& toolkit = {}) {
    // Files in memory stand for the disk: lookup_state is asked of real paths, so the test
    // writes them under a temporary folder and names them from there.
    return detail::include_lookups(search, "k.cu", source, reported, toolkit,
                                   [&](const std::string& path) -> std::optional<std::string> {
                                       auto it = files.find(path);
                                       if (it == files.end()) return std::nullopt;
                                       return it->second;
                                   });
}

struct IncludeLookupsOnDisk : ::testing::Test {
    test::TempDir dir;
    std::string root = dir.path().string();
    std::map<std::string, std::string> files;
    void write(const std::string& relative, const std::string& text) {
        const fs::path path = dir.path() / relative;
        fs::create_directories(path.parent_path());
        test::write_file(path, text);
        files[path.string()] = text;
    }
    detail::IncludeSearch search(std::vector<std::string> folders) {
        detail::IncludeSearch search;
        search.main_directory = root + "/src";
        for (auto& folder : folders) search.directories.push_back(root + "/" + folder);
        return search;
    }
    bool has(const std::vector<std::string>& list, const std::string& relative) {
        return std::find(list.begin(), list.end(), root + "/" + relative) != list.end();
    }
};

TEST_F(IncludeLookupsOnDisk, TriesQuotedNamesBesideTheirFileThenEverySearchFolder) {
    write("i2/v.h", "#include \"w.h\"\n#include <x.h>\n");
    write("i2/w.h", "");
    const auto lookups = lookups_of(search({"i1", "i2"}), "#include <v.h>\n", files);
    ASSERT_TRUE(lookups.refusal.empty()) << lookups.refusal;
    for (const char* path : {"i1/v.h", "i1/w.h", "i1/x.h", "i2/v.h", "i2/w.h", "i2/x.h"})
        EXPECT_TRUE(has(lookups.paths, path)) << path;
    EXPECT_FALSE(has(lookups.paths, "src/v.h"));  // <v.h> is not looked for beside the source
    // Found by following the names, whatever the compile reported.
    EXPECT_EQ(lookups.headers, (std::vector<std::string>{root + "/i2/v.h", root + "/i2/w.h"}));

    const auto quoted = lookups_of(search({"i1", "i2"}), "#include \"v.h\"\n", files);
    EXPECT_TRUE(has(quoted.paths, "src/v.h"));
}

TEST_F(IncludeLookupsOnDisk, ANameMadeByAMacroIsRefusedOutsideTheToolkitAndFollowedInsideIt) {
    const std::string computed = "#define H <sys/a.h>\n#include H\n";
    const auto user = lookups_of(search({"i", "tk"}), computed, files);
    EXPECT_NE(user.refusal.find("'k.cu' includes a header named by a macro"), std::string::npos)
        << user.refusal;

    // In the toolkit: every header read is tried as the name, in every search folder.
    write("tk/lib/x.h", computed);
    write("tk/sys/a.h", "");
    const auto toolkit = lookups_of(search({"i", "tk"}), "#include <lib/x.h>\n", files,
                                    {root + "/tk/sys/a.h"}, {root + "/tk"});
    ASSERT_TRUE(toolkit.refusal.empty()) << toolkit.refusal;
    for (const char* path : {"i/sys/a.h", "tk/sys/a.h", "tk/lib/sys/a.h"})
        EXPECT_TRUE(has(toolkit.paths, path)) << path;

    const auto test = lookups_of(search({"i"}), "#if __has_include(H)\n#endif\n", files);
    EXPECT_NE(test.refusal.find("tests for a header named by a macro"), std::string::npos)
        << test.refusal;
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
        const std::string before = compiled([&] { return compile_cached(first, CodeType::ptx, {}, {.cache = &cache}); });
        if (before != "error") {
            // Exact keys must still hit when nothing changed, in this process and in another.
            EXPECT_TRUE(find_cached(program(), CodeType::ptx, {}, {.cache = &cache})) << "tree " << tree_index << " " << last_warning();
            detail::forget_remembered_header_keys();
            EXPECT_TRUE(find_cached(program(), CodeType::ptx, {}, {.cache = &cache})) << "tree " << tree_index;
        }
        const std::string changes = tree.change();

        // The remembered key (this process) and the key made afresh (another process).
        const std::optional<ObjectCode> remembered = find_cached(program(), CodeType::ptx, {}, {.cache = &cache});
        detail::forget_remembered_header_keys();
        const std::optional<ObjectCode> afresh = find_cached(program(), CodeType::ptx, {}, {.cache = &cache});
        EXPECT_EQ(remembered.has_value(), afresh.has_value()) << "tree " << tree_index;
        Program fresh_program = program();
        const std::string fresh = compiled([&] { return fresh_program.compile(CodeType::ptx); });
        for (const auto* hit : {&remembered, &afresh}) {
            if (!*hit) continue;
            EXPECT_EQ(std::string((*hit)->code()), fresh)
                << "tree " << tree_index << ": a cache hit differs from a fresh compile after"
                << changes << "\nsource:\n" << source << tree.dump()
                << "record:\n" << cache.get(cache_key(program(), CodeType::ptx))->code();
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
