// The include search and project folder remembered per program name, flags and $CUDA_HOME
// (code/project_search.hpp), so that each new Program of a query engine does not work them out
// again: what it gives is what the working directory and $CUDA_HOME of the moment give, and NEW
// Program objects (no memo of their own) find the headers of the working directory they are
// compiled in.
#include "test_support.hpp"

#include "code/project_search.hpp"
#include "cudacore/cache_key.hpp"
#include "cudacore/cached_compile.hpp"
#include "cudacore/memory_program_cache.hpp"
#include "cudacore/program.hpp"

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace {

using namespace cudacore;
namespace fs = std::filesystem;
using test::ScopedEnv;
using test::ScopedWorkingDirectory;

const char* const including_kernel = R"(
#include "value.h"
extern "C" __global__ void store(int* out) { *out = STORED_VALUE; }
)";

bool holds(const ObjectCode& code, int value) {
    return code.code().find(std::to_string(value)) != std::string_view::npos;
}

std::string header_defining(int value) {
    return "#define STORED_VALUE " + std::to_string(value) + "\n";
}

// A relative name is resolved in the working directory of each call; the search is remembered
// for each working directory it was resolved in.
TEST(ProjectSearch, ARelativeNameFollowsTheWorkingDirectory) {
    test::TempDir dir;
    const fs::path one = fs::canonical(dir.path()) / "one", two = fs::canonical(dir.path()) / "two";
    fs::create_directories(one);
    fs::create_directories(two);
    const std::vector<std::string> flags{"-arch=sm_90", "--include-path=include"};
    ScopedWorkingDirectory working(one);
    const auto in_one = detail::project_search("src/k.cu", flags);
    EXPECT_EQ(in_one->search.main_directory, (one / "src").string());
    EXPECT_EQ(in_one->search.directories, std::vector<std::string>{(one / "include").string()});
    EXPECT_EQ(in_one->root.folder, one.string());
    EXPECT_EQ(detail::project_search("src/k.cu", flags), in_one) << "not remembered";

    working.change_to(two);
    const auto in_two = detail::project_search("src/k.cu", flags);
    EXPECT_EQ(in_two->search.main_directory, (two / "src").string());
    EXPECT_EQ(in_two->root.folder, two.string());
    EXPECT_EQ(in_two->search.working_directory, two.string());

    working.change_to(one);
    EXPECT_EQ(detail::project_search("src/k.cu", flags)->root.folder, one.string());
}

// A search of absolute folders does not depend on the working directory.
TEST(ProjectSearch, AnAbsoluteSearchIsTheSameInAnyWorkingDirectory) {
    test::TempDir dir;
    const fs::path project = fs::canonical(dir.path());
    const std::string name = (project / "src" / "k.cu").string();
    const std::vector<std::string> flags{"--include-path=" + (project / "include").string()};
    const auto here = detail::project_search(name, flags);
    EXPECT_TRUE(here->search.working_directory.empty());
    EXPECT_EQ(here->root.folder, project.string());
    // The flags and the name as the key holds them: relative to the project folder.
    EXPECT_EQ(here->key_fields, (std::vector<std::string>{"--include-path=@/include", "@/src/k.cu"}));
    ScopedWorkingDirectory working(fs::temp_directory_path());
    EXPECT_EQ(detail::project_search(name, flags), here);
}

// The toolkit's folders ($CUDA_HOME) are not the project's: under another $CUDA_HOME the same
// name and flags give another project folder.
TEST(ProjectSearch, AnotherCudaHomeIsAnotherProjectFolder) {
    test::TempDir dir;
    const fs::path project = fs::canonical(dir.path());
    const fs::path toolkit = project / "toolkit";
    fs::create_directories(toolkit / "include");
    test::write_file(toolkit / "include" / "cuda_runtime.h", "// a toolkit's marker\n");
    const std::string name = (project / "src" / "k.cu").string();
    const std::vector<std::string> flags{"--include-path=" + (toolkit / "include").string()};
    ScopedEnv elsewhere("CUDA_HOME", (project / "none").string());
    EXPECT_EQ(detail::project_search(name, flags)->root.folder, project.string());
    {
        ScopedEnv cuda_home("CUDA_HOME", toolkit.string());
        EXPECT_EQ(detail::project_search(name, flags)->root.folder, (project / "src").string());
    }
    EXPECT_EQ(detail::project_search(name, flags)->root.folder, project.string());
}

// A query engine's pattern: a new Program for every request. Each finds the header of the
// working directory it is compiled in, and hits what was stored for that directory.
TEST(ProjectSearch, NewProgramsInAnotherWorkingDirectorySeeItsHeader) {
    test::TempDir dir;
    const fs::path one = dir.path() / "one", two = dir.path() / "two";
    fs::create_directories(one);
    fs::create_directories(two);
    test::write_file(one / "value.h", header_defining(3737373));
    test::write_file(two / "value.h", header_defining(4848484));
    ProgramOptions options;
    options.arch = "sm_90";
    options.name = "store.cu";
    auto compiled_here = [&](MemoryProgramCache& cache) {
        Program program(including_kernel, SourceType::cxx, options);
        return compile_cached(program, CodeType::ptx, {}, {.cache = &cache});
    };
    MemoryProgramCache cache;
    ScopedWorkingDirectory working(one);
    ASSERT_TRUE(holds(compiled_here(cache), 3737373));
    const CacheStats stored = cache.stats();
    EXPECT_TRUE(holds(compiled_here(cache), 3737373));
    EXPECT_EQ(cache.stats().insertions, stored.insertions) << "a new Program missed";
    working.change_to(two);
    EXPECT_TRUE(holds(compiled_here(cache), 4848484)) << "the previous directory's header was used";
    EXPECT_TRUE(holds(compiled_here(cache), 4848484));
    working.change_to(one);
    const CacheStats back = cache.stats();
    EXPECT_TRUE(holds(compiled_here(cache), 3737373));
    EXPECT_EQ(cache.stats().insertions, back.insertions) << "the first directory's code was not hit";
}

}  // namespace
