// A cached compile is given the bytes its key was made from (headers/compile_snapshot.hpp): its
// code is byte for byte what a plain compile of the files gives, over a corpus of include forms
// and of forms that name paths, with and without line information; code that depends on the
// clock is never stored; two names of one file are refused where NVRTC's #pragma once would
// tell them apart from two files; a write through a shared mapping, a link switched above an
// include folder and a header rewritten while compiles run are all seen, because nothing is
// decided by a time stamp.
#include "test_support.hpp"

#include "code/checked_compile.hpp"
#include "code/snapshot_compile.hpp"
#include "cudacore/header_bundle.hpp"
#include "headers/compile_snapshot.hpp"
#include "headers/include_lookups.hpp"
#include "cudacore/cache_activity.hpp"
#include "cudacore/cached_compile.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/memory_program_cache.hpp"
#include "cudacore/program.hpp"
#include "cudacore/warnings.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace cudacore;
namespace fs = std::filesystem;
using cudacore::test::TempDir;

// Writes `contents` to `path`, making its folder first.
void write_file(const fs::path& path, const std::string& contents) {
    fs::create_directories(path.parent_path());
    test::write_file(path, contents);
}

// A program and its files, by path below the project folder; compiled from the project folder.
struct Case {
    std::string what;
    std::string name;  // the program's name; "@/" stands for the project folder
    std::string source;
    std::vector<std::pair<std::string, std::string>> files{};
    std::vector<std::string> include_path{};  // "@/" stands for the project folder
    std::vector<std::pair<std::string, std::string>> defines{};
    std::vector<std::string> pre_include{};
    bool cached = true;  // whether the cached compile may store it (else it says why not)
    std::vector<std::string> extra_flags{};
    bool no_source_include = false;
    std::string standard{};
    std::vector<std::pair<std::string, std::string>> links{};  // symbolic link -> its target
    bool declared = false;  // CompileOptions::paths_and_clock_do_not_matter: no check compile
    // Files written again after the hit: the compile that follows must be the plain compile of
    // the files as they are then (a miss, or a hit of that code).
    std::vector<std::pair<std::string, std::string>> changed{};
    // Whether it is stored with line information, where that differs from `cached` (NVRTC is
    // then given the path of a copy of the source, not the program's name).
    std::optional<bool> cached_with_lineinfo{};
    // The headers of one header bundle (the compile then leaves pch unset, as a plain compile
    // with bundles does: it reads them from their folder).
    std::vector<std::pair<std::string, std::string>> bundled{};
};

Case with_bundle(Case c, std::vector<std::pair<std::string, std::string>> bundled) {
    c.bundled = std::move(bundled);
    return c;
}

// `text` with each "@/" naming the project folder.
std::string with_project(std::string text, const fs::path& project) {
    for (std::size_t at = text.find("@/"); at != std::string::npos; at = text.find("@/", at))
        text.replace(at, 2, project.string() + "/");
    return text;
}

std::string in_project(const std::string& text, const fs::path& project) {
    return text.starts_with("@/") ? project.string() + "/" + text.substr(2) : text;
}

ProgramOptions options_of(const Case& c, const fs::path& project, bool lineinfo) {
    ProgramOptions options;
    options.name = in_project(c.name, project);
    options.arch = "sm_90";
    options.pch = false;
    for (const auto& folder : c.include_path) options.include_path.push_back(in_project(folder, project));
    for (const auto& [name, value] : c.defines) options.define_macro.push_back({name, value});
    options.pre_include = c.pre_include;
    options.extra_flags = c.extra_flags;
    if (c.no_source_include) options.no_source_include = true;
    if (!c.standard.empty()) options.std = c.standard;
    options.std_headers = true;  // <cassert>, and the toolkit's includes of them
    if (lineinfo) options.lineinfo = true;
    if (!c.bundled.empty()) {
        std::vector<BundledHeader> headers;
        for (const auto& [name, text] : c.bundled) headers.push_back({name, text});
        options.header_bundles = {HeaderBundle::from_headers(headers, "corpus bundle")};
        options.toolkit_include_path = true;
        options.std_headers = false;
        options.pch.reset();
    }
    return options;
}

// The PTX, or "error: <log>" when the compile fails.
std::string ptx_of(const std::function<ObjectCode()>& compile) {
    try {
        return std::string(compile().code());
    } catch (const CompileError& e) {
        return "error: " + std::string(e.what());
    }
}

// A header of the toolkit's CCCL.
fs::path toolkit_header(const std::string& name) {
    for (const char* root : {"/usr/local/cuda/include/cccl", "/usr/local/cuda/include"}) {
        const char* home = std::getenv("CUDA_HOME");
        const fs::path folder = home ? fs::path(home) / (std::string(root).ends_with("cccl") ? "include/cccl" : "include")
                                     : fs::path(root);
        if (fs::exists(folder / name)) return folder / name;
    }
    return {};
}

const std::string kernel_tail = "extern \"C\" __global__ void k(int* o) { *o = VALUE; }\n";

std::vector<Case> corpus() {
    const std::string value_h = "#pragma once\n#define VALUE 7\n";
    return {
        {"a quoted include beside a relative name", "src/k.cu", "#include \"v.h\"\n" + kernel_tail,
         {{"src/v.h", value_h}}},
        {"a bare name in the working directory", "k.cu", "#include \"v.h\"\n" + kernel_tail, {{"v.h", value_h}}},
        {"an absolute name", "@/src/k.cu", "#include \"v.h\"\n" + kernel_tail, {{"src/v.h", value_h}}},
        {"include folders spelled four ways", "src/k.cu",
         "#include <a.h>\n#include <b.h>\n#include <c.h>\n#include <d.h>\n"
         "__device__ const char* f[] = {A, B, C, D};\n"
         "extern \"C\" __global__ void k(const char** o) { *o = f[0]; }\n",
         {{"i1/a.h", "#define A __FILE__\n"}, {"i2/b.h", "#define B __FILE__\n"},
          {"i3/c.h", "#define C __FILE__\n"}, {"i4/d.h", "#define D __FILE__\n"}},
         {"i1", "./i2", "i3/", "@//i4"}},
        {"dot-dot operands and quoted includes beside a header", "src/k.cu",
         "#include \"../inc/../inc/a.h\"\n#include <sub/c.h>\n" + kernel_tail,
         {{"inc/a.h", "#include \"b.h\"\n"}, {"inc/b.h", "#include \"sub/c.h\"\n"},
          {"inc/sub/c.h", "#pragma once\n#include \"d.h\"\n"}, {"inc/sub/d.h", value_h}},
         {"inc"}},
        {"a quoted name found in a folder before the one beside it", "src/k.cu",
         "#include <a.h>\n" + kernel_tail,
         {{"i1/a.h", "#include \"v.h\"\n"}, {"i1/v.h", value_h}, {"i2/v.h", "#define VALUE 9\n"}}, {"i2", "i1"}},
        {"#pragma once and include guards", "src/k.cu",
         "constexpr int n = 0\n#include <once.h>\n#include <once.h>\n#include <guard.h>\n#include <guard.h>\n;\n"
         "#define VALUE n\n" + kernel_tail,
         {{"inc/once.h", "#pragma once\n+1\n"}, {"inc/guard.h", "#ifndef G\n#define G\n+10\n#endif\n"}}, {"inc"}},
        {"__has_include of names found and not found", "src/k.cu",
         "#if __has_include(\"v.h\") && !__has_include(<missing.h>) && __has_include(<cuda/std/version>)\n"
         "#include \"v.h\"\n#endif\n" + kernel_tail,
         {{"src/v.h", value_h}}},
        {"a digraph, line splices and a form feed", "src/k.cu",
         "%:include \"a.h\"\n#inc\\\nlude \"b\\\n.h\"\n\f#include \"c.h\"\n"
         "__device__ int line = __LINE__;\n" + kernel_tail,
         {{"src/a.h", "#define A 1\n"}, {"src/b.h", "#define B 1\n"}, {"src/c.h", value_h}}},
        {"names in comments and under #if 0", "src/k.cu",
         "// #include \"gone.h\"\n/* #include <gone.h> */\n#if 0\n#include \"gone.h\"\n#endif\n"
         "#include \"v.h\"\n" + kernel_tail,
         {{"src/v.h", value_h}}},
        {"a pre-include", "src/k.cu", kernel_tail, {{"pre.h", value_h}}, {}, {}, {"pre.h"}},
        {"a toolkit pre-include, with a bare name", "k.cu",
         "#include \"v.h\"\n#include <cuda/std/version>\n" + kernel_tail, {{"v.h", value_h}}, {}, {},
         {"cuda/std/cstdint"}},
        {"the toolkit beside the project", "src/k.cu",
         "#include <cuda/std/array>\n#include \"v.h\"\n"
         "extern \"C\" __global__ void k(int* o) { cuda::std::array<int, 2> a{VALUE, 1}; *o = a[*o & 1]; }\n",
         {{"inc/v.h", "#pragma once\n#include <cuda/std/cstdint>\n#define VALUE 7\n"}}, {"inc"}},
        // Forms that name paths, which a scan of names cannot find: the code names the file.
        {"__FILE__, __BASE_FILE__, __LINE__ and sizeof(__FILE__)", "src/k.cu",
         "#include <where.h>\n"
         "__device__ const char* w[] = {WHERE, __BASE_FILE__};\n"
         "extern \"C\" __global__ void k(int* o) { *o = sizeof(__FILE__) + __LINE__ + w[0][0]; }\n",
         {{"inc/where.h", "#define WHERE __FILE__\n"}}, {"inc"}},
        {"token pasting and a -D that pastes", "src/k.cu",
         "#define CAT(a, b) a##b\n__device__ const char* w[] = {CAT(__FI, LE__), PASTED};\n"
         "extern \"C\" __global__ void k(const char** o) { *o = w[0]; }\n",
         {}, {}, {{"PASTED", "CAT(__FI,LE__)"}}},
        {"a default argument and an initializer of __builtin_FILE()", "src/k.cu",
         "#include <loc.h>\nextern \"C\" __global__ void k(const char** o) { *o = here(); }\n",
         {{"inc/loc.h", "__device__ const char* here(const char* f = (__builtin_FILE())) { return f; }\n"}},
         {"inc"}},
        {"assert", "src/k.cu", "#include <cassert>\nextern \"C\" __global__ void k(int* o) { assert(*o > 0); }\n"},
        {"assert with NDEBUG", "src/k.cu",
         "#include <cassert>\nextern \"C\" __global__ void k(int* o) { assert(*o > 0); *o = 1; }\n", {}, {},
         {{"NDEBUG", ""}}},
        // What cannot be given from memory is compiled from the files and not cached.
        {"a name made by a macro", "src/k.cu", "#define H \"v.h\"\n#include H\n" + kernel_tail,
         {{"src/v.h", value_h}}, {}, {}, {}, false},
        // The project's copy of a header the toolkit's <cuda/std/array> includes: a compile from
        // the files reads the copy (found first), a compile from memory could not.
        {"a project header in the toolkit's place", "src/k.cu", "#include <cuda/std/array>\n#define VALUE 3\n" + kernel_tail,
         {{"inc/cuda/std/detail/__config", test::read_file(toolkit_header("cuda/std/detail/__config"))}}, {"inc"},
         {}, {}, false},
        {"a project header before the toolkit's, included by the project", "src/k.cu",
         "#include <cuda/std/cstdint>\n" + kernel_tail, {{"inc/cuda/std/cstdint", "#pragma once\n#define VALUE 3\n"}},
         {"inc"}},
        // NVRTC's own rules, each of which the snapshot must follow rather than its own.
        {"--no-source-include: nothing beside the source or a header", "src/k.cu",
         "#include \"z.h\"\n#include <w/w.h>\n__device__ int b = B + PRE;\n" + kernel_tail,
         {{"src/z.h", "#define VALUE 1\n"}, {"inc/z.h", "#define VALUE 2\n"}, {"hd/w/w.h", "#include \"y.h\"\n"},
          {"hd/w/y.h", "#define B 3\n"}, {"inc/y.h", "#define B 4\n"}, {"pre.h", "#define PRE 10\n"},
          {"inc/pre.h", "#define PRE 20\n"}},
         {"hd", "inc"}, {}, {"pre.h"}, true, {}, true},  // a pre-include is still looked for in the working directory
        {"include flags spelled -include=H, -I=D and -I==D", "src/k.cu", "#include <a.h>\n#include <b.h>\n" + kernel_tail,
         {{"pre.h", "#define PRE 1\n"}, {"i1/a.h", "#define A 2\n"}, {"=i2/b.h", "#define VALUE (PRE + A)\n"}},
         {}, {}, {}, true, {"-include=pre.h", "-I=i1", "-I==i2"}},
        {"an include folder with two trailing slashes", "src/k.cu",
         "#include <f.h>\nextern \"C\" __global__ void k(const char** o) { *o = f; }\n",
         {{"inc/f.h", "#include \"g.h\"\n__device__ const char* f = __FILE__;\n"}, {"inc/g.h", "__device__ int g;\n"}},
         {"inc//"}},
        {"a folder reached through a symbolic link and ..", "src/k.cu", "#include <v.h>\n" + kernel_tail,
         {{"real/deep/v.h", "#define VALUE 1\n"}, {"v.h", "#define VALUE 2\n"}, {"real/deep/sub/.keep", ""}},
         {"lnk/.."}, {}, {}, true, {}, false, {}, {{"lnk", "real/deep/sub"}}},
        // What no scan can follow is compiled from the files and not cached.
        {"an alias of __has_include in a header", "src/k.cu",
         "#include <alias.h>\n#if HI(\"opt.h\")\n#define VALUE 1\n#else\n#define VALUE 0\n#endif\n" + kernel_tail,
         {{"inc/alias.h", "#define HI __has_include\n"}, {"inc/opt.h", ""}}, {"inc"}, {}, {}, false},
        {"an alias of __has_include given by -D", "src/k.cu",
         "#if HI(\"opt.h\")\n#define VALUE 1\n#else\n#define VALUE 0\n#endif\n" + kernel_tail,
         {{"src/opt.h", ""}}, {}, {{"HI", "__has_include"}}, {}, false},
        {"a trigraph before C++17", "src/k.cu", "?" "?=include \"v.h\"\n" + kernel_tail,
         {{"src/v.h", value_h}}, {}, {}, {}, false, {}, false, "c++11", {}, true},
        // Where NVRTC reads the text otherwise than a scan that ignores the standard: an include
        // the scan missed would be read from disk, outside the key.
        {"a raw string under C++03, which has none", "src/k.cu",
         "#define R\n__device__ const char* s = R\"x(\";\n#include \"@/src/v.h\"\n//)x\";\n" + kernel_tail,
         {{"src/v.h", value_h}}, {}, {}, {}, true, {}, false, "c++03", {}, false, {{"src/v.h", "#define VALUE 8\n"}}},
        {"a digit separator that a skipped group reads as a quote", "src/k.cu",
         "#if 0\nint x = 1'2 /*\n#endif\n#include \"@/src/v.h\"\n#if 0\n*/\n#endif\n" + kernel_tail,
         {{"src/v.h", value_h}}, {}, {}, {}, false, {}, false, {}, {}, false, {{"src/v.h", "#define VALUE 8\n"}}},
        {"a header with a NUL byte, which memory would end there", "src/k.cu", "#include \"v.h\"\n" + kernel_tail,
         {{"src/v.h", [] {
              const char text[] = "#define VALUE 1 // \0 x\n#undef VALUE\n#define VALUE 2\n";
              return std::string(text, sizeof text - 1);
          }()}}, {}, {}, {},
         false},
        {"NVRTC's built-in header's name in an include folder", "src/k.cu",
         "#include <__nv_nvrtc_builtin_header.h>\n#ifdef PROJECT\n#define VALUE 1\n#else\n#define VALUE 2\n#endif\n" +
             kernel_tail,
         {{"inc/__nv_nvrtc_builtin_header.h", "#define PROJECT 1\n"}}, {"inc"}},
        {"a trigraph in a header's path before C++17", "src/k.cu",
         "#include <h.h>\nextern \"C\" __global__ void k(const char** o) { *o = f; }\n",
         {{"d?" "?=/h.h", "__device__ const char f[] = __FILE__;\n"}}, {"d?" "?="}, {}, {}, false, {}, false, "c++14"},
        // NVRTC looks for a name with no '.' in its last part also with ".stdh" appended, in
        // each folder it searches: the snapshot finds what it finds, also before the toolkit's.
        {"names NVRTC finds with .stdh appended", "src/k.cu",
         "#if __has_include(<v>)\n#include <v>\n#endif\n#include \"w\"\n#include <cuda/std/cstdint>\n"
         "#define VALUE (V + W + S)\n" + kernel_tail,
         {{"inc/v.stdh", "#define V 1\n"}, {"src/w.stdh", "#define W 2\n"},
          {"inc/cuda/std/cstdint.stdh", "#pragma once\n#define S 4\n"}},
         {"inc"}, {}, {}, true, {}, false, {}, {}, false, {{"inc/v.stdh", "#define V 8\n"}}},
        // NVRTC trims white space from some spellings of an include folder and not others.
        {"an include folder with white space around it", "src/k.cu",
         "#if __has_include(<b.h>)\n#include <b.h>\n#endif\n#ifndef VALUE\n#define VALUE 0\n#endif\n" + kernel_tail,
         {{"inc/b.h", "#define VALUE 5\n"}}, {}, {}, {}, false, {"-I inc"}},
        // A last -I with no folder: NVRTC searches the working directory.
        {"a last -I without a folder", "src/k.cu", "#include <b.h>\n" + kernel_tail,
         {{"b.h", "#define VALUE 6\n"}}, {}, {}, {}, true, {"-I"}, false, {}, {}, false,
         {{"b.h", "#define VALUE 8\n"}}},
        // NVRTC reads its own source for an include of the program's name, not the file there.
        {"a source that includes its own name", "k.cu",
         "#ifdef ONCE\n#define VALUE 2\n#else\n#define ONCE\n#include \"k.cu\"\n#ifndef VALUE\n#define VALUE 3\n"
         "#endif\n" + kernel_tail + "#endif\n",
         {{"k.cu", "#define VALUE 9\n"}}, {}, {}, {}, false, {}, false, {}, {}, false, {}, true},
        {"one file under two names, the compile from memory naming the other", "src/k.cu",
         "#include \"inc/f.h\"\n#include \"./inc/e.h\"\n"
         "extern \"C\" __global__ void k(const char** o) { *o = e_file; }\n",
         {{"src/inc/e.h", "#pragma once\n__device__ const char e_file[] = __FILE__;\n"},
          {"src/inc/f.h", "#pragma once\n#include \"e.h\"\n"}},
         {}, {}, {}, false},
        // A function-like macro whose body tests an angled operand made of its parameter.
        {"a wrapper of __has_include with an angled operand", "src/k.cu",
         "#define HAS(x) __has_include(<x>)\n#if HAS(a.h)\n#include <a.h>\n#else\n#define VALUE 2\n#endif\n" +
             kernel_tail,
         {{"inc/a.h", "#define VALUE 41\n"}}, {"inc"}, {}, {}, false},
        // The names a cached compile gives its headers from memory under are no program's.
        {"a test for a name of the headers given from memory", "src/k.cu",
         "#include \"v.h\"\n#if __has_include(\"/proc/self/cudacore-snapshot/0\")\n#define W 1\n#else\n#define W 2\n"
         "#endif\n#undef VALUE\n#define VALUE W\n" + kernel_tail,
         {{"src/v.h", value_h}}, {}, {}, {}, false},
        // A plain compile reads header bundles from their folder, where a path spelled with '.',
        // '..' or '//' may find a bundled header that memory, matching names as they are, does not.
        with_bundle({"an include spelled ./x.h with a bundle holding x.h", "src/k.cu", "#include <./x.h>\n" + kernel_tail,
                     {{"inc/x.h", "#define VALUE 7\n"}}, {"inc"}, {}, {}, false},
                    {{"x.h", "#define VALUE 5\n"}}),
        with_bundle({"an include spelled d/../x.h with a bundle holding d/y.h and x.h", "src/k.cu",
                     "#include <d/../x.h>\n" + kernel_tail, {{"inc/d/.keep", ""}, {"inc/x.h", "#define VALUE 7\n"}},
                     {"inc"}, {}, {}, false},
                    {{"x.h", "#define VALUE 5\n"}, {"d/y.h", ""}}),
        // NVRTC looks for a pre-include in the working directory first from a folder, after
        // every header in memory: a plain compile then reads the bundles from memory.
        with_bundle({"a pre-include of a bundled name the working directory holds", "src/k.cu", kernel_tail,
                     {{"x.h", "#define VALUE 9\n"}}, {}, {}, {"x.h"}},
                    {{"x.h", "#define VALUE 5\n"}}),
        with_bundle({"a pre-include spelled ./x.h with a bundle holding x.h", "src/k.cu", kernel_tail,
                     {{"inc/x.h", "#define VALUE 8\n"}}, {"inc"}, {}, {"./x.h"}, false},
                    {{"x.h", "#define VALUE 5\n"}}),
        // A bundled header's quoted include of a name it does not hold: memory looks beside it
        // in the working directory, a folder beside it in the folder, then the include folders.
        with_bundle({"a bundled header's quoted include of another name", "src/k.cu", "#include <d/y.h>\n" + kernel_tail,
                     {{"d/z.h", "#define VALUE 1\n"}, {"inc/z.h", "#define VALUE 2\n"}}, {"inc"}, {}, {}, false},
                    {{"d/y.h", "#include \"z.h\"\n"}}),
    };
}

TEST(CompileSnapshot, ACachedCompileIsThePlainCompileOfTheFiles) {
    TempDir dir;
    test::ScopedWorkingDirectory working(dir.path());
    std::size_t index = 0, stored = 0;
    for (const Case& c : corpus()) {
        for (const bool lineinfo : {false, true}) {
            const fs::path project = dir.path() / std::to_string(index++);
            for (const auto& [path, text] : c.files) write_file(project / path, text);
            for (const auto& [link, target] : c.links) fs::create_directory_symlink(project / target, project / link);
            fs::create_directories(project / "src");
            working.change_to(project);
            const ProgramOptions options = options_of(c, project, lineinfo);
            const std::string what = c.what + (lineinfo ? " (lineinfo)" : "");
            const std::string source = with_project(c.source, project);
            Program plain(source, SourceType::cxx, options);
            const std::string expected = ptx_of([&] { return plain.compile(CodeType::ptx); });
            MemoryProgramCache cache;
            test::WarningLog warnings;
            Program first(source, SourceType::cxx, options);
            const std::string cached = ptx_of([&] { return compile_cached(first, CodeType::ptx, {}, {.cache = &cache, .paths_and_clock_do_not_matter = c.declared}); });
            if (expected.starts_with("error")) {
                // With line information NVRTC compiles a copy of the source in the debug-source
                // folder, where a header beside the source is not found: both fail.
                EXPECT_TRUE(lineinfo && cached.starts_with("error")) << what << ": " << expected;
                continue;
            }
            EXPECT_EQ(cached, expected) << what << ": the cached compile (a miss) differs from the plain compile";
            Program second(source, SourceType::cxx, options);
            const std::optional<ObjectCode> hit = find_cached(second, CodeType::ptx, {}, {.cache = &cache, .paths_and_clock_do_not_matter = c.declared});
            if (hit) EXPECT_EQ(std::string(hit->code()), expected) << what << ": the hit differs";
            const bool stores = lineinfo && c.cached_with_lineinfo ? *c.cached_with_lineinfo : c.cached;
            EXPECT_EQ(hit.has_value(), stores) << what << (warnings.seen.empty() ? "" : ": " + warnings.seen[0].message);
            if (hit.has_value() != stores) continue;
            if (!stores) {
                ASSERT_FALSE(warnings.seen.empty()) << what;
                EXPECT_EQ(warnings.seen[0].kind, WarningKind::not_cached) << what;
            }
            stored += hit.has_value();
            if (c.changed.empty()) continue;
            for (const auto& [path, text] : c.changed) write_file(project / path, text);
            Program changed_plain(source, SourceType::cxx, options);
            const std::string now = ptx_of([&] { return changed_plain.compile(CodeType::ptx); });
            ASSERT_NE(now, expected) << what << ": the change must change the code";
            Program third(source, SourceType::cxx, options);
            const std::string after = ptx_of([&] {
                return compile_cached(third, CodeType::ptx, {}, {.cache = &cache, .paths_and_clock_do_not_matter = c.declared});
            });
            EXPECT_EQ(after, now) << what << ": after the change, the cached compile is not the plain compile";
        }
    }
    EXPECT_GE(stored, 30u);
}

// A program whose code depends on the clock is compiled, never stored, and says so.
TEST(CompileSnapshot, CodeThatReadsTheClockIsNotCached) {
    for (const std::string macro : {"__TIME__", "__DATE__"}) {
        MemoryProgramCache cache;
        test::WarningLog warnings;
        ProgramOptions options;
        options.arch = "sm_90";
        const std::string source = "__device__ const char* when = " + macro +
                                   ";\nextern \"C\" __global__ void k(const char** o) { *o = when; }\n";
        Program program(source, SourceType::cxx, options);
        EXPECT_NO_THROW(compile_cached(program, CodeType::ptx, {}, {.cache = &cache}));
        EXPECT_EQ(cache.stats().insertions, 0u) << macro;
        ASSERT_EQ(warnings.seen.size(), 1u) << macro;
        EXPECT_EQ(warnings.seen[0].kind, WarningKind::not_cached);
        EXPECT_NE(warnings.seen[0].message.find("depends on the clock"), std::string::npos) << warnings.seen[0].message;
        // Reached through a macro of a macro, pasted: the compiler, not a scan, shows it.
        Program pasted("#define CAT(a, b) a##b\n#define WHEN CAT(__TI, ME__)\n__device__ const char* w = WHEN;\n"
                       "extern \"C\" __global__ void k(const char** o) { *o = w; }\n",
                       SourceType::cxx, options);
        compile_cached(pasted, CodeType::ptx, {}, {.cache = &cache});
        EXPECT_EQ(cache.stats().insertions, 0u);
    }
}

// A program of templates only: NVRTC names its internal entities after the process and the time
// of the compile (no function of external linkage to name them after), so no two compiles give
// the same bytes there. It is cached all the same; the hit differs from a plain compile only in
// that id.
TEST(CompileSnapshot, AProgramOfTemplatesOnlyIsCached) {
    TempDir dir;
    const std::string source = "#include <cuda/std/array>\n"
                               "template <class T> __global__ void fill(T* out) { cuda::std::array<T, 2> a{T(1), T(2)}; *out = a[1]; }\n";
    ProgramOptions options;
    options.arch = "sm_90";
    options.name = (dir.path() / "k.cu").string();
    MemoryProgramCache cache;
    test::WarningLog warnings;
    Program program(source, SourceType::cxx, options);
    const ObjectCode code = compile_cached(program, CodeType::cubin, {"fill<float>"}, {.cache = &cache});
    EXPECT_TRUE(warnings.seen.empty()) << warnings.seen.front().message;
    EXPECT_EQ(cache.stats().insertions, 1u);
    Program again(source, SourceType::cxx, options);
    const std::optional<ObjectCode> hit = find_cached(again, CodeType::cubin, {"fill<float>"}, {.cache = &cache});
    ASSERT_TRUE(hit);
    EXPECT_EQ(*hit, code);
    EXPECT_EQ(hit->symbol_map().at("fill<float>"), "_Z4fillIfEvPT_");
}

// Whatever the scan misses, the check compile tells: the worker records every file NVRTC opens to
// read, so a directive NVRTC met that no operand was rewritten for shows as a file read from disk
// (and compile_checked then stores nothing). The project's headers, given from memory, are never
// opened; the toolkit's are, and besides them only the kernel's files (/proc, /sys, /dev).
TEST(CompileSnapshot, TheCheckCompileTellsEveryFileNvrtcReadFromDisk) {
    TempDir dir;
    const fs::path missed = dir.path() / "missed.h";
    write_file(missed, "#define VALUE 7\n");
    const fs::path tested = dir.path() / "tested.h";  // a test finds it without opening it
    write_file(tested, "");
    detail::CompileSnapshot snapshot;
    snapshot.nvrtc_name = (dir.path() / "k.cu").string();
    snapshot.source = "#include \"" + missed.string() + "\"\n#include \"/proc/self/cudacore-snapshot/0\"\n"
                      "#if __has_include(\"" + tested.string() + "\")\n#endif\n"
                      "#include <cuda/std/cstdint>\n" + kernel_tail;
    snapshot.flags = {"-arch=sm_90"};
    const std::vector<std::string> toolkit = toolkit_include_dirs();
    for (const std::string& folder : toolkit) snapshot.flags.push_back("--include-path=" + folder);
    snapshot.headers.push_back({"/proc/self/cudacore-snapshot/0", "#line 1 \"given.h\"\n#define GIVEN 1\n"});
    const std::vector<HeaderBundle> bundles;
    const std::vector<std::string> expressions;
    const detail::CheckCompileResult result =
        detail::run_check_compile({snapshot, bundles, expressions, CodeType::ptx, false, false});
    ASSERT_TRUE(result.compiled) << result.failure;
    for (const fs::path& path : {missed, tested})
        EXPECT_NE(std::find(result.opened.begin(), result.opened.end(), path.string()), result.opened.end()) << path;
    bool toolkit_seen = false;
    for (const std::string& path : result.opened) {
        if (path == missed.string() || path == tested.string()) continue;
        // The kernel's files, which the driver's and NVRTC's set-up read on a GPU host: no header.
        if (path.starts_with("/proc/") || path.starts_with("/sys/") || path.starts_with("/dev/")) continue;
        EXPECT_TRUE(std::any_of(toolkit.begin(), toolkit.end(),
                                [&](const std::string& folder) { return path.starts_with(folder + "/"); }))
            << "NVRTC read '" << path << "', neither the toolkit's nor the missed header";
        toolkit_seen = toolkit_seen || path.find("cuda/std/cstdint") != std::string::npos;
    }
    EXPECT_TRUE(toolkit_seen) << "the toolkit's headers are read from disk, and recorded";
}

// The record is read against what the key holds: a toolkit file NVRTC read that the scan did not
// reach (its bytes are in no key), one that a project include folder also holds under the same
// name (an angled include of it, had the scan missed one, would find the project's in a compile
// from the files), and a name looked for beside the source or a header given from memory (where
// only a quoted include the scan missed is looked for) each leave the code out of every key; the
// toolkit files the scan reached, under names no project folder holds, do not.
TEST(CompileSnapshot, TheRecordAllowsOnlyTheToolkitFilesTheKeyHoldsUnshadowed) {
    TempDir dir;
    const fs::path project = dir.path() / "include";
    fs::create_directories(project);
    const std::string name = (dir.path() / "k.cu").string();
    std::vector<std::string> flags = {"-arch=sm_90", "--include-path=" + project.string()};
    const std::vector<std::string> toolkit = toolkit_include_dirs();
    for (const std::string& folder : toolkit) flags.push_back("--include-path=" + folder);
    const detail::IncludeSearch search = detail::include_search(name, flags);
    const std::vector<std::string> no_bundles;
    auto snapshot_of = [&](const std::string& source) {
        detail::CompileSnapshot snapshot = detail::take_compile_snapshot({search, name, source, flags, toolkit, no_bundles});
        EXPECT_TRUE(snapshot.refusal.empty()) << snapshot.refusal;
        EXPECT_NE(std::find(snapshot.project_include_folders.begin(), snapshot.project_include_folders.end(), project.string()),
                  snapshot.project_include_folders.end());
        return snapshot;
    };
    const std::vector<HeaderBundle> bundles;
    const std::vector<std::string> expressions;
    auto check_of = [&](const detail::CompileSnapshot& given) {
        detail::CheckCompileResult result =
            detail::run_check_compile({given, bundles, expressions, CodeType::ptx, false, false});
        EXPECT_TRUE(result.compiled) << result.failure;
        return result;
    };
    // An include the scan missed (written into the text after the scan), found in the toolkit.
    const detail::CompileSnapshot bare = snapshot_of("#define VALUE 7\n" + kernel_tail);
    EXPECT_EQ(detail::read_outside_snapshot(check_of(bare), bare, bare), "");
    detail::CompileSnapshot missed = bare;
    missed.source = "#include <cuda/std/cstdint>\n" + missed.source;
    const std::string unreached = detail::read_outside_snapshot(check_of(missed), missed, bare);
    EXPECT_NE(unreached.find("cuda/std/cstdint"), std::string::npos) << unreached;
    EXPECT_NE(unreached.find("the key's toolkit files leave out"), std::string::npos) << unreached;
    // A quoted include the scan missed is looked for beside its includer first: beside the source
    // (its folder), or beside a header given from memory (the memory folder).
    detail::CompileSnapshot quoted = bare;
    quoted.source = "#include \"cuda/std/cstdint\"\n" + quoted.source;
    const std::string beside_source = detail::read_outside_snapshot(check_of(quoted), quoted, bare);
    EXPECT_NE(beside_source.find("looked for '" + (dir.path() / "cuda/std/cstdint").string() + "'"), std::string::npos)
        << beside_source;
    write_file(project / "h.h", "#define VALUE 7\n");
    const detail::CompileSnapshot with_header = snapshot_of("#include \"h.h\"\n" + kernel_tail);
    ASSERT_EQ(with_header.headers.size(), 1u);
    EXPECT_EQ(detail::read_outside_snapshot(check_of(with_header), with_header, with_header), "");
    detail::CompileSnapshot in_header = with_header;
    in_header.headers[0].content += "#include \"cuda/std/cstdint\"\n";
    const std::string beside_header = detail::read_outside_snapshot(check_of(in_header), in_header, with_header);
    EXPECT_NE(beside_header.find("looked for '/proc/self/cudacore-snapshot/cuda/std/cstdint'"), std::string::npos)
        << beside_header;
    // As taken, with the include: everything NVRTC read is the key's.
    const detail::CompileSnapshot snapshot = snapshot_of("#include <cuda/std/cstdint>\n#define VALUE 7\n" + kernel_tail);
    ASSERT_TRUE(snapshot.toolkit_files);
    const detail::CheckCompileResult plain = check_of(snapshot);
    EXPECT_EQ(detail::read_outside_snapshot(plain, snapshot, snapshot), "");
    // A project folder holding a name the toolkit's reached file answers to: a compile from the
    // files may find the project's (were an include of it missed), so the record refuses.
    write_file(project / "cuda/std/cstdint", "#error not the toolkit's\n");
    const std::string shadowed = detail::read_outside_snapshot(plain, snapshot, snapshot);
    EXPECT_NE(shadowed.find((project / "cuda/std/cstdint").string()), std::string::npos) << shadowed;
    fs::remove(project / "cuda/std/cstdint");
    EXPECT_EQ(detail::read_outside_snapshot(plain, snapshot, snapshot), "");
}

// The comparison leaves out exactly the unit id: its hex digits and the compiling process's id.
TEST(CompileSnapshot, CodeIsComparedButForTheUnitId) {
    const std::string a = ".global .b8 _ZN44_INTERNAL_00000000_8_bench_cu_4505a92d_116234cuda3std5beginE[1];";
    const std::string b = ".global .b8 _ZN44_INTERNAL_00000000_8_bench_cu_c0bfbcda_116244cuda3std5beginE[1];";
    EXPECT_TRUE(detail::same_code_but_unit_ids(a, 11623, b, 11624));
    EXPECT_FALSE(detail::same_code_but_unit_ids(a, 11623, b, 11625));  // not that process's id
    std::string other = b;
    other.replace(other.find("cuda3std"), 8, "cudb3std");
    EXPECT_FALSE(detail::same_code_but_unit_ids(a, 11623, other, 11624));  // another name
    const std::string longer = ".global .b8 _ZN45_INTERNAL_00000000_8_bench_cu_c0bfbcda_1162444cuda3std5beginE[1];";
    EXPECT_FALSE(detail::same_code_but_unit_ids(a, 11623, longer, 116244));  // another length: compared in workers
    // The same id in the name of an unnamed namespace (CCCL's <cuda/std/__algorithm_>).
    const std::string c = ".global .b8 _ZN42_INTERNAL_00000000_6_alg_cu_62694929_198274cuda3std3__444_GLOBAL__N__"
                          "00000000_6_alg_cu_62694929_198276ignoreE[1];";
    const std::string d = ".global .b8 _ZN42_INTERNAL_00000000_6_alg_cu_0b2c4f17_198304cuda3std3__444_GLOBAL__N__"
                          "00000000_6_alg_cu_0b2c4f17_198306ignoreE[1];";
    EXPECT_TRUE(detail::same_code_but_unit_ids(c, 19827, d, 19830));
    std::string e = d;
    e.replace(e.find("6ignore"), 7, "6ignorf");
    EXPECT_FALSE(detail::same_code_but_unit_ids(c, 19827, e, 19830));  // another name
}

// NVRTC's #pragma once sees one file under two names (a link): so does the cached compile, which
// gives NVRTC one in-memory header; two copies of the same bytes are two files for both, and the
// key tells the checkouts apart.
TEST(CompileSnapshot, TwoNamesOfOneFileAreOneFileTwoCopiesAreTwo) {
    TempDir dir;
    const std::string source = "constexpr int n = 0\n#include \"inc/a.h\"\n#include \"alias/a.h\"\n;\n"
                               "extern \"C\" __global__ void k(int* o) { *o = n * 1000 + 7; }\n";
    std::vector<CacheKey> keys;
    for (const bool linked : {true, false}) {
        const fs::path project = dir.path() / (linked ? "linked" : "copied");
        write_file(project / "inc" / "a.h", "#pragma once\n+1\n");
        if (linked) fs::create_directory_symlink("inc", project / "alias");
        else write_file(project / "alias" / "a.h", "#pragma once\n+1\n");
        ProgramOptions options;
        options.arch = "sm_90";
        options.name = (project / "k.cu").string();
        Program plain(source, SourceType::cxx, options);
        const std::string expected(plain.compile(CodeType::ptx).code());
        EXPECT_NE(expected.find(linked ? "1007" : "2007"), std::string::npos) << expected;
        MemoryProgramCache cache;
        test::WarningLog warnings;
        Program cached(source, SourceType::cxx, options);
        EXPECT_EQ(std::string(compile_cached(cached, CodeType::ptx, {}, {.cache = &cache}).code()), expected);
        EXPECT_EQ(cache.stats().insertions, 1u);
        EXPECT_TRUE(warnings.seen.empty()) << warnings.seen.front().message;
        keys.push_back(cache.entry_keys().value().at(0));
        Program again(source, SourceType::cxx, options);
        const std::optional<ObjectCode> hit = find_cached(again, CodeType::ptx, {}, {.cache = &cache});
        ASSERT_TRUE(hit);
        EXPECT_EQ(std::string(hit->code()), expected);
    }
    EXPECT_NE(keys[0], keys[1]);
}

ProgramOptions value_program(const fs::path& project) {
    ProgramOptions options;
    options.arch = "sm_90";
    options.name = (project / "k.cu").string();
    options.include_path = {(project / "inc").string()};
    options.pch = false;  // NVRTC checks a PCH by size and a second of mtime: the expectations are made without
    return options;
}

// A write through a shared mapping changes neither size nor (with the stamp put back) mtime: the
// next lookup reads the bytes, so it is a miss, and its code is the new header's.
TEST(CompileSnapshot, AWriteThroughASharedMappingIsSeen) {
    TempDir dir;
    const fs::path header = dir.path() / "inc" / "v.h";
    write_file(header, "#define VALUE 1111\n");
    const std::string source = "#include <v.h>\n" + kernel_tail;
    MemoryProgramCache cache;
    Program program(source, SourceType::cxx, value_program(dir.path()));
    EXPECT_NE(std::string(compile_cached(program, CodeType::ptx, {}, {.cache = &cache}).code()).find("1111"),
              std::string::npos);
    struct stat before {};
    ASSERT_EQ(::stat(header.c_str(), &before), 0);
    const int fd = ::open(header.c_str(), O_RDWR);
    ASSERT_GE(fd, 0);
    void* mapped = ::mmap(nullptr, static_cast<std::size_t>(before.st_size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ASSERT_NE(mapped, MAP_FAILED);
    std::memcpy(static_cast<char*>(mapped) + 14, "2222", 4);
    ::munmap(mapped, static_cast<std::size_t>(before.st_size));
    const struct timespec times[2] = {before.st_atim, before.st_mtim};
    ASSERT_EQ(::futimens(fd, times), 0);
    ::close(fd);
    EXPECT_FALSE(find_cached(program, CodeType::ptx, {}, {.cache = &cache}));
    EXPECT_NE(std::string(compile_cached(program, CodeType::ptx, {}, {.cache = &cache}).code()).find("2222"),
              std::string::npos);
    Program another(source, SourceType::cxx, value_program(dir.path()));
    const std::optional<ObjectCode> hit = find_cached(another, CodeType::ptx, {}, {.cache = &cache});
    ASSERT_TRUE(hit);
    EXPECT_NE(std::string(hit->code()).find("2222"), std::string::npos);
}

// A deploy tool switches a link above an include folder (inc/vendor -> ../rel/current/vendor,
// current -> v1, then v2): the next compile is of v2.
TEST(CompileSnapshot, ALinkSwitchedAboveAnIncludeFolderIsSeen) {
    TempDir dir;
    const fs::path project = dir.path();
    write_file(project / "rel" / "v1" / "vendor" / "v.h", "#define VALUE 1111\n");
    write_file(project / "rel" / "v2" / "vendor" / "v.h", "#define VALUE 2222\n");
    fs::create_directory_symlink("v1", project / "rel" / "current");
    fs::create_directories(project / "inc");
    fs::create_directory_symlink("../rel/current/vendor", project / "inc" / "vendor");
    const std::string source = "#include <vendor/v.h>\n" + kernel_tail;
    MemoryProgramCache cache;
    Program program(source, SourceType::cxx, value_program(project));
    EXPECT_NE(std::string(compile_cached(program, CodeType::ptx, {}, {.cache = &cache}).code()).find("1111"),
              std::string::npos);
    fs::create_directory_symlink("v2", project / "rel" / "next");
    fs::rename(project / "rel" / "next", project / "rel" / "current");
    EXPECT_NE(std::string(compile_cached(program, CodeType::ptx, {}, {.cache = &cache}).code()).find("2222"),
              std::string::npos);
    EXPECT_EQ(cache.stats().hits, 0u);
}

// A header saved again and again (by rename, as editors save) while compiles run: whatever a
// compile returns is the code of one of the header's two contents, and the cache never holds
// code under the other's key: once the header stays still, a hit is its plain compile. (Edits in
// place, caught half written, are the file storm's: tests/cpu/cache/compile/file_storm_test.cpp.)
TEST(CompileSnapshot, AHeaderRewrittenDuringCompilesNeverLeavesAWrongEntry) {
    TempDir dir;
    const fs::path header = dir.path() / "inc" / "v.h";
    const std::string contents[2] = {"#define VALUE 1111\n", "#define VALUE 22222\n"};
    const std::string source = "#include <v.h>\n" + kernel_tail;
    std::string expected[2];
    for (int i = 0; i < 2; ++i) {
        write_file(header, contents[i]);
        Program plain(source, SourceType::cxx, value_program(dir.path()));
        expected[i] = std::string(plain.compile(CodeType::ptx).code());
    }
    MemoryProgramCache cache;
    std::atomic<bool> stop{false};
    std::thread writer([&] {
        for (unsigned i = 0; !stop; ++i) {
            write_file(dir.path() / "inc" / "next", contents[i % 2]);
            fs::rename(dir.path() / "inc" / "next", header);
        }
    });
    int made = 0;
    for (int round = 0; round < 12; ++round) {
        Program program(source, SourceType::cxx, value_program(dir.path()));
        const std::string got = ptx_of([&] { return compile_cached(program, CodeType::ptx, {}, {.cache = &cache}); });
        EXPECT_TRUE(got == expected[0] || got == expected[1]) << got;
        made += got == expected[0] || got == expected[1];
    }
    EXPECT_EQ(made, 12);
    stop = true;
    writer.join();
    for (int i = 0; i < 2; ++i) {
        write_file(header, contents[i]);
        Program program(source, SourceType::cxx, value_program(dir.path()));
        const std::optional<ObjectCode> hit = find_cached(program, CodeType::ptx, {}, {.cache = &cache});
        if (hit) EXPECT_EQ(std::string(hit->code()), expected[i]);
        EXPECT_EQ(std::string(compile_cached(program, CodeType::ptx, {}, {.cache = &cache}).code()), expected[i]);
    }
}

// The standard headers' folder lies below the cache folder, which may lie inside the working
// directory (CUDACORE_CACHE_DIR=$PWD/.cache, as CI jobs set it): the check compile moves the
// working directory and the project's folders, never the standard headers' (keyed by their
// bytes), so such a program is cached like any other.
TEST(CompileSnapshot, StandardHeadersBelowTheWorkingDirectoryAreCached) {
    TempDir dir;
    test::ScopedWorkingDirectory working(dir.path());
    const fs::path cache_folder = dir.path() / ".cudacore-cache";
    test::ScopedEnv in_project("CUDACORE_CACHE_DIR", cache_folder.string());
    ProgramOptions options;
    options.arch = "sm_90";
    options.pch = false;
    options.std_headers = true;
    options.name = "k.cu";
    const std::string source =
        "#include <cstdint>\nextern \"C\" __global__ void k(std::uint32_t* o) { *o = sizeof(std::uint64_t); }\n";
    Program plain(source, SourceType::cxx, options);
    const std::string expected(plain.compile(CodeType::ptx).code());
    ASSERT_TRUE(fs::exists(cache_folder / "header-bundles")) << "the standard headers are not below the working directory";
    MemoryProgramCache cache;
    test::WarningLog warnings;
    Program first(source, SourceType::cxx, options);
    EXPECT_EQ(std::string(compile_cached(first, CodeType::ptx, {}, {.cache = &cache}).code()), expected);
    EXPECT_TRUE(warnings.seen.empty()) << warnings.seen.front().message;
    Program second(source, SourceType::cxx, options);
    const std::optional<ObjectCode> hit = find_cached(second, CodeType::ptx, {}, {.cache = &cache});
    ASSERT_TRUE(hit) << "not cached";
    EXPECT_EQ(std::string(hit->code()), expected);
}

// The command line tells the user that a compile was not cached, and why.
TEST(CompileSnapshot, TheCommandLineSaysWhenACompileIsNotCached) {
    TempDir dir;
    write_file(dir.path() / "t.cu", "__device__ const char* t = __TIME__;\n"
                                    "extern \"C\" __global__ void k(const char** o) { *o = t; }\n");
    const test::ProcessResult result = test::run_process(
        {test::cli_path().string(), "compile", (dir.path() / "t.cu").string(), "-o", (dir.path() / "t.ptx").string(),
         "--arch", "sm_90", "--target", "ptx"},
        {{"CUDACORE_CACHE_DIR", (dir.path() / "cache").string()}});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.err.find("cudacore: warning: compile_cached: program"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("not cached: its code depends on the clock"), std::string::npos) << result.err;
}

}  // namespace
