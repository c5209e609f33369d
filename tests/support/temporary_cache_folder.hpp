// A cache folder of a test's own: CUDACORE_CACHE_DIR pointed at a fresh temporary folder, so
// that what a test caches (header bundle folders, program cache entries) never lands in the
// user's real cache (~/.cache/cudacore), and is removed afterwards. Child processes the test
// starts inherit the variable.
#pragma once

#include "test_support.hpp"

#include <gtest/gtest.h>

#include <stdlib.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace cudacore::test {

// CUDACORE_CACHE_DIR set to `<fresh temporary folder>/cache` (not made yet) while this lives;
// the previous value (or its absence) is restored and the folder removed at destruction.
class TemporaryCacheFolder {
public:
    TemporaryCacheFolder() : root_(temp_.path() / "cache") {
        if (const char* old = std::getenv("CUDACORE_CACHE_DIR")) previous_ = old;
        had_previous_ = std::getenv("CUDACORE_CACHE_DIR") != nullptr;
        ::setenv("CUDACORE_CACHE_DIR", root_.c_str(), 1);
    }
    ~TemporaryCacheFolder() {
        if (had_previous_) ::setenv("CUDACORE_CACHE_DIR", previous_.c_str(), 1);
        else ::unsetenv("CUDACORE_CACHE_DIR");
    }
    TemporaryCacheFolder(const TemporaryCacheFolder&) = delete;
    TemporaryCacheFolder& operator=(const TemporaryCacheFolder&) = delete;

    // The cache folder (CUDACORE_CACHE_DIR).
    const std::filesystem::path& cache() const { return root_; }
    // Where header bundle folders are written.
    std::filesystem::path bundles() const { return root_ / "header-bundles"; }
    // The names in bundles(), sorted (none when it does not exist).
    std::vector<std::string> entries() const {
        std::vector<std::string> names;
        std::error_code error;
        for (const auto& entry : std::filesystem::directory_iterator(bundles(), error))
            names.push_back(entry.path().filename());
        std::sort(names.begin(), names.end());
        return names;
    }

private:
    TempDir temp_;
    std::filesystem::path root_;
    std::string previous_;
    bool had_previous_ = false;
};

// A TemporaryCacheFolder for a whole test program, for programs whose tests compile with header
// bundles: register it once with
//   [[maybe_unused]] ::testing::Environment* const cache_folder =
//       ::testing::AddGlobalTestEnvironment(new TemporaryCacheFolderEnvironment);
class TemporaryCacheFolderEnvironment : public ::testing::Environment {
public:
    void SetUp() override { folder_ = std::make_unique<TemporaryCacheFolder>(); }
    void TearDown() override { folder_.reset(); }

private:
    std::unique_ptr<TemporaryCacheFolder> folder_;
};

}  // namespace cudacore::test
