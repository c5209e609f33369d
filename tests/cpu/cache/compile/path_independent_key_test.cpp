// One project checked out at two paths keys its programs alike, and no two programs that share a
// code key have different code. Every kernel of the suite's sources and of the examples, and
// programs made to name paths (assert, __FILE__, a macro that names one, a flag that holds one,
// token pasting, a digraph, a default argument, __BASE_FILE__, sizeof(__FILE__),
// source_location), each compiled in two checkouts, with and without line information: every pair
// that shares a key has the same bytes, and the programs that name no path do share their key. A
// hit from the other checkout's disk cache calls NVRTC no time.
#include "suite_kernels.hpp"
#include "test_support.hpp"

#include "cache/cached_entry.hpp"
#include "code/path_key.hpp"
#include "cudacore/cache_activity.hpp"
#include "cudacore/cache_key.hpp"
#include "cudacore/cached_compile.hpp"
#include "cudacore/disk_program_cache.hpp"
#include "cudacore/memory_program_cache.hpp"
#include "cudacore/program.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace {

using namespace cudacore;
namespace fs = std::filesystem;
using cudacore::test::TempDir;
using cudacore::test::write_file;

// A program and the files of its project, by path in the project.
struct Project {
    std::string origin;
    std::string source;
    std::vector<std::pair<std::string, std::string>> files{};
    // Whether the code names no path, so two checkouts must share the key (without line
    // information); unset for the suite's kernels (the rule decides, the bytes are checked).
    std::optional<bool> path_free{};
    bool define_checkout = false;  // -DCHECKOUT="<the checkout's folder>"
    bool std_headers = false;      // cudacore's standard headers (a folder in the user's cache)
};

// The program named by its path in the checkout (src/k.cu), searching the checkout's include/.
ProgramOptions options_in(const fs::path& checkout, const Project& project, bool lineinfo) {
    ProgramOptions options;
    options.name = (checkout / "src" / "k.cu").string();
    options.arch = "sm_90";
    options.pch = false;
    options.include_path = {(checkout / "include").string()};
    if (lineinfo) options.lineinfo = true;
    options.std_headers = project.std_headers;
    if (project.define_checkout)
        options.define_macro.push_back({"CHECKOUT", "\"" + checkout.string() + "\""});
    return options;
}

void write_project(const fs::path& checkout, const Project& project) {
    fs::create_directories(checkout / "src");
    fs::create_directories(checkout / "include");
    for (const auto& [path, text] : project.files) write_file(checkout / path, text);
}

struct Compiled {
    CacheKey key;
    std::string bytes;
};

// A miss in a cache of its own (NVRTC makes the bytes here), and the code key it was stored under;
// nullopt when the kernel needs options this test does not give it.
std::optional<Compiled> compile_in(const fs::path& checkout, const Project& project, bool lineinfo,
                                   CodeType target) {
    write_project(checkout, project);
    Program program(project.source, SourceType::cxx, options_in(checkout, project, lineinfo));
    MemoryProgramCache cache;
    std::string bytes;
    try {
        bytes = std::string(compile_cached(program, target, {}, {.cache = &cache}).code());
    } catch (const CompileError&) {
        return std::nullopt;
    }
    const std::optional<detail::CachedEntry> entry =
        detail::find_cached_entry(cache, program, target, cache_key(program, target, {}), {.cache = &cache});
    if (!entry) return std::nullopt;  // compiled but not cached (a not_cached warning said why)
    return Compiled{entry->code_key, std::move(bytes)};
}

std::vector<Project> made_projects() {
    const std::string scale_h = "#pragma once\n#define SCALE 3\n";
    return {
        {"printf", "extern \"C\" __global__ void k(int v) { printf(\"%d\\n\", v); }\n", {}, true},
        {"headers in include folders",
         "#include \"detail.h\"\n#include <scale.h>\n"
         "extern \"C\" __global__ void k(int* o) { *o = SCALE * DETAIL; }\n",
         {{"include/scale.h", scale_h}, {"include/detail.h", "#define DETAIL 5\n"}}, true},
        // With line information NVRTC compiles a copy of the source in the debug-source folder,
        // where a quoted include beside the source is not found: compiled without only.
        {"a header beside the source",
         "#include \"detail.h\"\nextern \"C\" __global__ void k(int* o) { *o = DETAIL; }\n",
         {{"src/detail.h", "#define DETAIL 5\n"}}, true},
        {"cuda/std",
         "#include <cuda/std/array>\n#include <cuda/std/type_traits>\n"
         "extern \"C\" __global__ void k(int* o) {\n"
         "  cuda::std::array<int, 4> a{1, 2, 3, 4};\n"
         "  *o = a[o[1] & 3] + cuda::std::is_same_v<int, int>;\n}\n",
         {}, true},
        {"assert", "extern \"C\" __global__ void k(int* o) { assert(*o > 0); }\n",
         {}, false},
        {"__FILE__ in a header",
         "#include <where.h>\nextern \"C\" __global__ void k(const char** o) { *o = where(); }\n",
         {{"include/where.h", "__device__ const char* where() { return __FILE__; }\n"}}, false},
        {"a macro that names __FILE__",
         "#include <check.h>\nextern \"C\" __global__ void k(int* o) { CHECK(*o > 0); }\n",
         {{"include/check.h",
           "#define HERE __FILE__\n#define CHECK(x) if (!(x)) printf(\"%s\\n\", HERE)\n"}},
         false},
        {"a macro defined with the checkout's path",
         "extern \"C\" __global__ void k(const char** o) { *o = CHECKOUT; }\n", {}, false, true},
        {"standard headers",
         "#include <cstdint>\nextern \"C\" __global__ void k(std::uint64_t* o) { *o = UINT64_MAX; }\n",
         {}, true, false, true},
        {"<cassert> of the standard headers",
         "#include <cassert>\nextern \"C\" __global__ void k(int* o) { assert(*o > 0); }\n", {},
         false, false, true},
        // Forms that name a path where no scan of names sees one: the check compile shows it.
        {"token pasting", "#define CAT(a, b) a##b\n"
         "extern \"C\" __global__ void k(const char** o) { *o = CAT(__FI, LE__); }\n", {}, false},
        {"a digraph and a form feed before a directive",
         "%:define WHERE(x) x\n\f#define HERE WHERE(__FILE__)\n"
         "extern \"C\" __global__ void k(const char** o) { *o = HERE; }\n", {}, false},
        {"a default argument", "#include <at.h>\nextern \"C\" __global__ void k(const char** o) { *o = at(); }\n",
         {{"include/at.h", "__device__ const char* at(const char* f = (__builtin_FILE())) { return f; }\n"}}, false},
        {"__BASE_FILE__ in a header's function",
         "#include <base.h>\nextern \"C\" __global__ void k(const char** o) { *o = base(); }\n",
         {{"include/base.h", "__device__ const char* base() { return __BASE_FILE__; }\n"}}, false},
        {"sizeof(__FILE__)", "extern \"C\" __global__ void k(int* o) { *o = sizeof(__FILE__); }\n", {}, false},
        {"source_location", "#include <cuda/std/source_location>\n"
         "extern \"C\" __global__ void k(const char** o) { *o = cuda::std::source_location::current().file_name(); }\n",
         {}, false},
        {"assert with NDEBUG", "#define NDEBUG\n#include <cassert>\n"
         "extern \"C\" __global__ void k(int* o) { assert(*o > 0); *o = 1; }\n", {}, std::nullopt, false, true},
    };
}

std::vector<Project> all_projects() {
    std::vector<Project> projects = made_projects();
    for (auto& kernel : cudacore::test::suite_and_example_kernels(true))
        projects.push_back({kernel.origin, kernel.source});
    return projects;
}

// The property over every program, and the counts that show it is not empty.
TEST(PathIndependentKeys, EveryPairSharingAKeyHasTheSameCodeAtTwoPaths) {
    const std::vector<Project> projects = all_projects();
    ASSERT_GE(projects.size(), 40u) << "the examples and tests were not found (set "
                                       "CUDACORE_SOURCE_DIR to the source tree)";
    TempDir dir;
    // Two checkouts at paths of different depths and names.
    const fs::path first = dir.path() / "ci-1" / "project";
    const fs::path second = dir.path() / "home" / "someone" / "work" / "project";
    std::map<CacheKey, std::pair<std::string, std::string>> by_key;  // key -> bytes, who made them
    std::size_t compiled = 0, shared = 0, path_free_compiled = 0, path_free_shared = 0;
    for (std::size_t i = 0; i < projects.size(); ++i) {
        const Project& project = projects[i];
        for (const bool lineinfo : {false, true}) {
            std::optional<Compiled> at[2];
            for (int c = 0; c < 2; ++c) {
                const fs::path checkout = (c == 0 ? first : second) / std::to_string(i);
                at[c] = compile_in(checkout, project, lineinfo, CodeType::ptx);
                if (!at[c]) continue;
                const std::string who = project.origin + (lineinfo ? " (lineinfo) at " : " at ") +
                                        checkout.string();
                auto [it, fresh] = by_key.try_emplace(at[c]->key, at[c]->bytes, who);
                EXPECT_TRUE(fresh || it->second.first == at[c]->bytes)
                    << who << " has the key of " << it->second.second << " but other code";
            }
            // The programs made here compile and are cached at both paths.
            EXPECT_TRUE(!project.path_free || (at[0] && at[1]) ||
                        (lineinfo && project.origin == "a header beside the source"))
                << project.origin << (lineinfo ? " (lineinfo)" : "");
            if (!at[0] || !at[1]) continue;
            ++compiled;
            const bool same_key = at[0]->key == at[1]->key;
            shared += same_key;
            if (lineinfo) EXPECT_FALSE(same_key) << project.origin << ": line information names paths";
            if (project.path_free && !lineinfo) {
                EXPECT_EQ(same_key, *project.path_free) << project.origin;
                // Where the key keeps the path it must: the code differs.
                if (!*project.path_free) EXPECT_NE(at[0]->bytes, at[1]->bytes) << project.origin;
            }
            if (!lineinfo && at[0]->bytes == at[1]->bytes) {
                ++path_free_compiled;
                path_free_shared += same_key;
            }
        }
    }
    std::printf("%zu programs: %zu compiled at both paths, %zu shared a key; of %zu with the same "
                "code at both paths without line information, %zu shared a key\n",
                projects.size(), compiled, shared, path_free_compiled, path_free_shared);
    // Most of the suite's kernels name no path: they must share (else the property is empty).
    EXPECT_GE(path_free_shared, 30u);
    EXPECT_GE(path_free_shared * 10, path_free_compiled * 8);
}

// A second process in another checkout finds the first one's code on disk: NVRTC is not called.
TEST(PathIndependentKeys, OtherCheckoutsDiskCacheIsAHitWithoutCompiling) {
    TempDir dir;
    DiskProgramCache disk(dir.path() / "cache");
    const Project project = made_projects()[1];  // headers in the include folder
    const fs::path first = dir.path() / "a" / "project", second = dir.path() / "b" / "c" / "project";
    write_project(first, project);
    write_project(second, project);
    Program made(project.source, SourceType::cxx, options_in(first, project, false));
    const std::string bytes(compile_cached(made, CodeType::cubin, {}, {.cache = &disk}).code());
    reset_cache_stats();
    Program found(project.source, SourceType::cxx, options_in(second, project, false));
    EXPECT_EQ(std::string(compile_cached(found, CodeType::cubin, {}, {.cache = &disk}).code()), bytes);
    EXPECT_EQ(cache_stats().compiles, 0u);
    // An edit in the second checkout is still seen there.
    write_file(second / "include" / "scale.h", "#define SCALE 4\n");
    Program edited(project.source, SourceType::cxx, options_in(second, project, false));
    EXPECT_NE(std::string(compile_cached(edited, CodeType::cubin, {}, {.cache = &disk}).code()), bytes);
    EXPECT_EQ(cache_stats().compiles, 1u);
}

// An entry keeps the name of the program that stored it; a hit in another checkout is named as
// the program that asks, as its plain compile names it, from disk and from memory.
TEST(PathIndependentKeys, AHitFromAnotherCheckoutIsNamedAsTheAskingProgram) {
    TempDir dir;
    DiskProgramCache disk(dir.path() / "cache");
    MemoryProgramCache memory;
    const Project project = made_projects()[1];
    const fs::path first = dir.path() / "a" / "project", second = dir.path() / "b" / "c" / "project";
    write_project(first, project);
    write_project(second, project);
    Program made(project.source, SourceType::cxx, options_in(first, project, false));
    for (ProgramCache* cache : {static_cast<ProgramCache*>(&disk), static_cast<ProgramCache*>(&memory)})
        EXPECT_EQ(compile_cached(made, CodeType::cubin, {}, {.cache = cache}).name(), made.options().name);
    for (ProgramCache* cache : {static_cast<ProgramCache*>(&disk), static_cast<ProgramCache*>(&memory)}) {
        reset_cache_stats();
        Program found(project.source, SourceType::cxx, options_in(second, project, false));
        const ObjectCode hit = compile_cached(found, CodeType::cubin, {}, {.cache = cache});
        EXPECT_EQ(cache_stats().compiles, 0u);
        EXPECT_EQ(hit.name(), found.options().name);
        EXPECT_EQ(compile_cached(found, CodeType::cubin, {}, {.cache = cache}).name(), found.options().name);
        EXPECT_EQ(find_cached(found, CodeType::cubin, {}, {.cache = cache})->name(), found.options().name);
        EXPECT_EQ(hit, found.compile(CodeType::cubin));
    }
}

// Folders given relative to the working directory, each process in its own checkout.
TEST(PathIndependentKeys, RelativeFoldersShareFromTheWorkingDirectory) {
    TempDir dir;
    DiskProgramCache disk(dir.path() / "cache");
    const Project project = made_projects()[1];
    test::ScopedWorkingDirectory working(dir.path());
    std::string bytes[2];
    for (int c = 0; c < 2; ++c) {
        const fs::path checkout = dir.path() / (c == 0 ? "x" : "y/z") / "project";
        write_project(checkout, project);
        working.change_to(checkout);
        ProgramOptions options;
        options.name = "src/k.cu";
        options.arch = "sm_90";
        options.include_path = {"include"};
        reset_cache_stats();
        Program program(project.source, SourceType::cxx, options);
        bytes[c] = std::string(compile_cached(program, CodeType::ptx, {}, {.cache = &disk}).code());
        EXPECT_EQ(cache_stats().compiles, c == 0 ? 1u : 0u) << checkout;
    }
    EXPECT_EQ(bytes[0], bytes[1]);
}

TEST(PathIndependentKeys, KeyTextIsOneToOne) {
    detail::ProjectRoot root{"/work/project", "/home/u/.cache/std"};
    for (const std::string path : {"/work/project", "/work/project/include/a.h", "/work/projects/a.h",
                                   "/work/project/../x.h", "/home/u/.cache/std/cstdio", "/usr/include/x.h"}) {
        EXPECT_EQ(root.path_of(root.key_text(path)), path);
    }
    EXPECT_EQ(root.key_text("/work/project/include/a.h"), "@/include/a.h");
    EXPECT_EQ(root.key_text("/work/projects/a.h"), "/work/projects/a.h");
    EXPECT_EQ(root.key_text("/home/u/.cache/std/cstdio"), "%/cstdio");
    const detail::ProjectRoot top{"/", {}};
    EXPECT_EQ(top.path_of(top.key_text("/a/b.h")), "/a/b.h");
}

}  // namespace
