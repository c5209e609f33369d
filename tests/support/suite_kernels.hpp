// The kernels of the suite's sources and of the examples, read from the source tree: each raw
// string literal of examples/*.cpp and tests/support/*.{cpp,hpp} that defines a __global__
// function. For properties over every program the project compiles. A test that includes this
// defines CUDACORE_TEST_SOURCE_ROOT (tests/CMakeLists.txt: the source tree it was built from).
#pragma once

#include "test_support.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace cudacore::test {

struct SuiteKernel {
    std::string origin;  // file and ordinal ("kernel_sources.hpp #3"), for messages
    std::string source;
};

// The folder of this source tree (examples/, tests/support/): CUDACORE_SOURCE_DIR, the folder the
// tests were built from, or found from the working directory; empty when none holds them.
inline std::filesystem::path suite_source_root() {
    std::vector<std::filesystem::path> candidates;
    if (const char* env = std::getenv("CUDACORE_SOURCE_DIR"); env && *env) candidates.emplace_back(env);
    candidates.emplace_back(CUDACORE_TEST_SOURCE_ROOT);
    candidates.emplace_back("..");
    candidates.emplace_back(".");
    for (const auto& candidate : candidates) {
        std::error_code ignored;
        if (std::filesystem::is_regular_file(candidate / "examples/saxpy.cpp", ignored)) return candidate;
    }
    return {};
}

// Every raw string literal R"delim(...)delim" of `text` that defines a kernel.
inline std::vector<std::string> kernels_in(const std::string& text) {
    std::vector<std::string> out;
    for (std::size_t at = text.find("R\""); at != std::string::npos; at = text.find("R\"", at + 2)) {
        const std::size_t open = text.find('(', at + 2);
        if (open == std::string::npos || open - at - 2 > 16) continue;
        const std::string close = ")" + text.substr(at + 2, open - at - 2) + "\"";
        const std::size_t end = text.find(close, open + 1);
        if (end == std::string::npos) break;
        std::string body = text.substr(open + 1, end - open - 1);
        if (body.find("__global__") != std::string::npos) out.push_back(std::move(body));
        at = end;
    }
    return out;
}

// The kernels of examples/ and tests/support/ (and, with `cpu_tests`, of every source under
// tests/cpu/), in file order; empty when the tree is not found.
inline std::vector<SuiteKernel> suite_and_example_kernels(bool cpu_tests = false) {
    const std::filesystem::path root = suite_source_root();
    std::vector<SuiteKernel> kernels;
    if (root.empty()) return kernels;
    std::vector<std::filesystem::path> files;
    auto add = [&](const std::filesystem::path& path) {
        const auto extension = path.extension();
        if (extension == ".cpp" || extension == ".hpp") files.push_back(path);
    };
    for (const char* folder : {"examples", "tests/support"}) {
        for (const auto& entry : std::filesystem::directory_iterator(root / folder)) add(entry.path());
    }
    if (cpu_tests) {
        for (const auto& entry : std::filesystem::recursive_directory_iterator(root / "tests/cpu"))
            add(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
        const std::vector<std::string> found = kernels_in(read_file(file));
        for (std::size_t i = 0; i < found.size(); ++i)
            kernels.push_back({file.filename().string() + " #" + std::to_string(i + 1), found[i]});
    }
    return kernels;
}

}  // namespace cudacore::test
