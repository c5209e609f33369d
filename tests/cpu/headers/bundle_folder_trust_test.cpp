// A bundle folder is used through what was checked: a header rewritten (same size) while NVRTC reads
// the folder is found after the compile (every byte, and every file's change time) and the program
// compiled again from memory, then the folder is repaired; a subfolder swapped for a link is
// refused at every level; and a cache folder another user could change (writable by others, owned
// by another user, a link in place of header-bundles) is never used: the headers are read from
// memory, with one warning that names the folder.
#include "bundle_folder_sample.hpp"
#include "temporary_cache_folder.hpp"
#include "test_support.hpp"

#include "headers/bundle_folder.hpp"
#include "cudacore/disk_program_cache.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/program.hpp"
#include "cudacore/warnings.hpp"

#include <poll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <string>

namespace {

using namespace cudacore;
namespace fs = std::filesystem;

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

ProgramOptions options_with(const HeaderBundle& bundle) {
    ProgramOptions options;
    options.name = "trust_folder";
    options.arch = "sm_90";
    options.header_bundles = {bundle};
    return options;
}

std::string compiled(const HeaderBundle& bundle, PchStatus* status = nullptr) {
    Program program(test::kSampleFolderSource, SourceType::cxx, options_with(bundle));
    std::string ptx(program.compile(CodeType::ptx).code());
    if (status) *status = program.pch_status();
    return ptx;
}

// The first header of the sample bundle with another value and the same size.
std::string edited_first_header(const HeaderBundle& bundle) {
    std::string text = *bundle.find("gen/sub0/h0.h");
    text.replace(text.find("1000"), 4, "2222");
    return text;
}

// Blocks until `path` is closed after reading (bounded), then returns.
bool wait_for_a_read(const fs::path& path, int fd) {
    pollfd waiting{fd, POLLIN, 0};
    if (::poll(&waiting, 1, 60'000) <= 0) return false;
    alignas(inotify_event) char buffer[4096];
    return ::read(fd, buffer, sizeof buffer) > 0 || path.empty();
}

TEST(BundleFolderTrust, AHeaderRewrittenWhileNvrtcReadsTheFolderIsNeverCompiled) {
    const test::TemporaryCacheFolder cache;
    const HeaderBundle bundle = test::sample_folder_bundle(5, 100);
    const fs::path header = bundle.folder() / "gen/sub0/h0.h";
    const int watch = ::inotify_init1(IN_CLOEXEC);
    ASSERT_GE(watch, 0);
    ASSERT_GE(::inotify_add_watch(watch, header.c_str(), IN_CLOSE_NOWRITE), 0);
    // Rewritten in place at the first read after the check: the compile may read either text.
    auto rewrite = std::async(std::launch::async, [&] {
        const bool read = wait_for_a_read(header, watch);
        test::write_file(header, edited_first_header(bundle));
        return read;
    });
    PchStatus status;
    const std::string first = compiled(bundle, &status);
    ASSERT_TRUE(rewrite.get());
    ::close(watch);
    EXPECT_TRUE(contains(first, "1000"));
    EXPECT_FALSE(contains(first, "2222")) << "compiled a header rewritten in the bundle folder";
    // The next compile finds the rewritten header, before NVRTC reads it or after, and the folder
    // is made again.
    const std::string second = compiled(bundle, &status);
    EXPECT_TRUE(contains(second, "1000"));
    EXPECT_FALSE(contains(second, "2222")) << "compiled a header rewritten in the bundle folder";
    const std::string third = compiled(bundle, &status);
    EXPECT_TRUE(contains(third, "1000"));
    EXPECT_EQ(detail::bundle_folder_problem(bundle.folder(), bundle, true), "");
    EXPECT_NE(status.outcome, PchOutcome::not_attempted) << "the repaired folder is read again: " << status.reason;
}

TEST(BundleFolderTrust, ASubfolderSwappedForALinkIsRefused) {
    const test::TemporaryCacheFolder cache;
    const test::TempDir elsewhere;
    const HeaderBundle bundle = test::sample_folder_bundle(5, 100);
    const fs::path folder = bundle.folder();
    fs::copy(folder / "gen", elsewhere.path() / "gen", fs::copy_options::recursive);
    test::write_file(elsewhere.path() / "gen/sub0/h0.h", edited_first_header(bundle));
    fs::remove_all(folder / "gen");
    fs::create_directory_symlink(elsewhere.path() / "gen", folder / "gen");
    EXPECT_TRUE(contains(detail::bundle_folder_problem(folder, bundle, false), "link"))
        << detail::bundle_folder_problem(folder, bundle, false);
    const std::string ptx = compiled(bundle);
    EXPECT_TRUE(contains(ptx, "1000"));
    EXPECT_FALSE(contains(ptx, "2222")) << "compiled a header reached through a link";
    EXPECT_FALSE(fs::is_symlink(folder / "gen"));
}

// Compiles with the cache folder as it is and expects memory, and one warning naming `named`.
void expect_refused(const HeaderBundle& bundle, const std::string& named, const std::string& why) {
    test::WarningLog warnings;
    PchStatus status;
    const std::string ptx = compiled(bundle, &status);
    EXPECT_TRUE(contains(ptx, "1000"));
    EXPECT_TRUE(contains(status.reason, "read from memory")) << status.reason;
    ASSERT_EQ(warnings.seen.size(), 1u);
    EXPECT_EQ(warnings.seen[0].kind, WarningKind::pch_off);
    EXPECT_TRUE(contains(warnings.seen[0].message, named)) << warnings.seen[0].message;
    EXPECT_TRUE(contains(warnings.seen[0].message, why)) << warnings.seen[0].message;
}

TEST(BundleFolderTrust, ACacheFolderOthersCanWriteIsNotUsed) {
    const test::TemporaryCacheFolder cache;
    fs::create_directories(cache.cache());
    ::chmod(cache.cache().c_str(), 0777);
    expect_refused(test::sample_folder_bundle(6, 100), cache.cache().string(), "writable by other users");
    EXPECT_FALSE(fs::exists(cache.bundles() / detail::bundle_folder_name(test::sample_folder_bundle(6, 100))));
}

TEST(BundleFolderTrust, HeaderBundlesSwappedForALinkIsNotUsed) {
    const test::TemporaryCacheFolder cache;
    const test::TempDir planted;
    fs::create_directories(cache.cache());
    fs::create_directory_symlink(planted.path(), cache.bundles());
    expect_refused(test::sample_folder_bundle(7, 100), cache.bundles().string(), "symbolic link");
    EXPECT_TRUE(fs::is_empty(planted.path()));
}

TEST(BundleFolderTrust, ACacheFolderOfAnotherUserIsNotUsed) {
    const test::TemporaryCacheFolder cache;
    fs::create_directories(cache.cache());
    if (::geteuid() != 0 || ::chown(cache.cache().c_str(), 65534, 65534) != 0)
        GTEST_SKIP() << "giving a folder to another user needs root";
    expect_refused(test::sample_folder_bundle(8, 100), cache.cache().string(), "owned by another user");
}

// The program cache gets the same rule: a folder above it that others can write (not sticky)
// could be swapped for theirs.
TEST(BundleFolderTrust, AProgramCacheBelowAFolderOthersCanWriteIsRefused) {
    const test::TempDir dir;
    fs::create_directories(dir.path() / "shared");
    ::chmod((dir.path() / "shared").c_str(), 0777);
    const auto refused = test::expect_invalid<CacheError>(
        [&] { DiskProgramCache cache((dir.path() / "shared" / "cache").string()); },
        {"refusing cache directory", "writable by other users"});
    EXPECT_TRUE(refused.has_value());
    ::chmod((dir.path() / "shared").c_str(), 01777);  // sticky, as /tmp: others cannot rename ours
    EXPECT_NO_THROW(DiskProgramCache((dir.path() / "shared" / "cache2").string()));
}

}  // namespace
