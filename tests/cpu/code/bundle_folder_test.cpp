// Header bundles written out as folders (HeaderBundle::folder(), used by Program::compile for
// NVRTC's precompiled headers): one folder per digest under $CUDACORE_CACHE_DIR, made by many
// processes at once without leftovers, damaged folders found and replaced, a maker killed
// halfway leaving nothing trusted, compiles reading the folder with PCH, and a compile that falls
// back to memory (with one warning) where no folder can be made. NVRTC runs without a GPU.
#include "bundle_folder_sample.hpp"
#include "test_support.hpp"

#include "code/bundle_folder.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/program.hpp"

#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

namespace {

using namespace cudacore;
namespace fs = std::filesystem;

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// Points the cache folder at a fresh temporary folder for one test; restores it after.
class CacheFolder {
public:
    CacheFolder() : root_(temp_.path() / "cache") {
        if (const char* old = std::getenv("CUDACORE_CACHE_DIR")) previous_ = old;
        ::setenv("CUDACORE_CACHE_DIR", root_.c_str(), 1);
    }
    ~CacheFolder() {
        if (previous_.empty()) ::unsetenv("CUDACORE_CACHE_DIR");
        else ::setenv("CUDACORE_CACHE_DIR", previous_.c_str(), 1);
    }
    CacheFolder(const CacheFolder&) = delete;
    CacheFolder& operator=(const CacheFolder&) = delete;
    const fs::path& cache() const { return root_; }
    fs::path bundles() const { return root_ / "header-bundles"; }
    // The names in the bundles' folder, sorted.
    std::vector<std::string> entries() const {
        std::vector<std::string> names;
        for (const auto& entry : fs::directory_iterator(bundles())) names.push_back(entry.path().filename());
        std::sort(names.begin(), names.end());
        return names;
    }

private:
    test::TempDir temp_;
    fs::path root_;
    std::string previous_;
};

ProgramOptions options_with(const HeaderBundle& bundle) {
    ProgramOptions options;
    options.name = "from_folder";
    options.arch = "sm_90";
    options.header_bundles = {bundle};
    return options;
}

std::vector<std::string> worker(int headers, int bytes, bool compile = false) {
    std::vector<std::string> argv = {test::helper_path("bundle_folder_worker").string(),
                                     std::to_string(headers), std::to_string(bytes)};
    if (compile) argv.emplace_back("compile");
    return argv;
}

// The worker that compiles from the folder if it can, from memory if not.
std::vector<std::string> fallback_worker(int headers, int bytes) {
    std::vector<std::string> argv = worker(headers, bytes);
    argv.emplace_back("fallback");
    return argv;
}

TEST(BundleFolder, MadeOnceUnderTheDigestAndChecked) {
    const CacheFolder cache;
    const HeaderBundle bundle = test::sample_folder_bundle(20, 100);
    const fs::path folder = bundle.folder();
    EXPECT_EQ(folder, cache.bundles() / bundle.digest());
    EXPECT_EQ(detail::bundle_folder_problem(folder, bundle, true), "");
    EXPECT_EQ(test::read_file(folder / "gen/sub3/h10.h"), *bundle.find("gen/sub3/h10.h"));
    EXPECT_TRUE(contains(test::read_file(folder / ".cudacore-bundle"), "digest " + bundle.digest()));
    EXPECT_FALSE(fs::exists(folder / "owner.lock"));
    EXPECT_EQ(fs::status(cache.bundles()).permissions() & fs::perms::all, fs::perms::owner_all);
    // Asked again: the same folder, nothing else made.
    EXPECT_EQ(bundle.folder(), folder);
    EXPECT_EQ(cache.entries(), (std::vector<std::string>{"." + bundle.digest() + ".lock", bundle.digest()}));
    // Another bundle, another folder.
    EXPECT_NE(test::sample_folder_bundle(21, 100).folder(), folder);
}

TEST(BundleFolder, DamagedFolderIsFoundAndReplaced) {
    const CacheFolder cache;
    const HeaderBundle bundle = test::sample_folder_bundle(20, 100);
    const fs::path folder = bundle.folder();
    auto expect_repaired = [&](const char* damage) {
        EXPECT_NE(detail::bundle_folder_problem(folder, bundle, false), "") << damage;
        EXPECT_EQ(bundle.folder(), folder) << damage;
        EXPECT_EQ(detail::bundle_folder_problem(folder, bundle, true), "") << damage;
        for (const std::string& name : cache.entries()) EXPECT_FALSE(name.starts_with("staging-")) << name;
    };
    fs::remove(folder / "gen/sub1/h1.h");
    expect_repaired("a header removed");
    fs::resize_file(folder / "gen/sub2/h2.h", 10);
    expect_repaired("a header truncated");
    fs::remove(folder / ".cudacore-bundle");
    expect_repaired("the manifest removed");
    test::write_file(folder / ".cudacore-bundle", "cudacore header bundle folder 1\ndigest 00\n");
    expect_repaired("another manifest");
    fs::remove_all(folder / "gen/sub4");
    fs::create_symlink("/", folder / "gen/sub4");
    expect_repaired("a folder replaced by a symbolic link");
    // Same size, other bytes: the first use in a process compares every byte (a new process).
    std::string text = test::read_file(folder / "gen/sub5/h5.h");
    text[0] = text[0] == '#' ? '/' : '#';
    test::write_file(folder / "gen/sub5/h5.h", text);
    EXPECT_EQ(detail::bundle_folder_problem(folder, bundle, false), "");
    EXPECT_NE(detail::bundle_folder_problem(folder, bundle, true), "");
    const test::ProcessResult fixed = test::run_process(worker(20, 100));
    EXPECT_EQ(fixed.exit_code, 0) << fixed.err;
    EXPECT_EQ(detail::bundle_folder_problem(folder, bundle, true), "");
}

TEST(BundleFolder, ManyProcessesAtOnceMakeOneFolder) {
    const CacheFolder cache;
    const int headers = 400, bytes = 2000;
    std::vector<pid_t> pids;
    for (int i = 0; i < 6; ++i) pids.push_back(test::spawn(worker(headers, bytes, /*compile=*/i % 2 == 0)));
    for (const pid_t pid : pids) EXPECT_EQ(test::wait_for(pid), 0) << "worker " << pid;
    const HeaderBundle bundle = test::sample_folder_bundle(headers, bytes);
    // One folder, its lock file, and no staging folder or temporary file left.
    EXPECT_EQ(cache.entries(), (std::vector<std::string>{"." + bundle.digest() + ".lock", bundle.digest()}));
    EXPECT_EQ(detail::bundle_folder_problem(cache.bundles() / bundle.digest(), bundle, true), "");
    std::size_t files = 0;
    for (const auto& entry : fs::recursive_directory_iterator(cache.bundles() / bundle.digest()))
        files += entry.is_regular_file() ? 1 : 0;
    EXPECT_EQ(files, bundle.size() + 1);  // the headers and the manifest
}

TEST(BundleFolder, MakerKilledHalfwayLeavesNothingTrusted) {
    const CacheFolder cache;
    const int headers = 3000, bytes = 4000;
    const HeaderBundle bundle = test::sample_folder_bundle(headers, bytes);
    const fs::path folder = cache.bundles() / bundle.digest();
    int killed_while_staging = 0;
    for (int attempt = 0; attempt < 5; ++attempt) {
        fs::remove_all(folder);
        const pid_t pid = test::spawn(worker(headers, bytes));
        // Killed once its staging folder (locked, named for reclaimers) exists.
        bool staging = false;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (!staging && std::chrono::steady_clock::now() < deadline) {
            std::error_code error;
            for (const auto& entry : fs::directory_iterator(cache.bundles(), error)) {
                const std::string name = entry.path().filename();
                staging = staging || (name.starts_with("staging-") && !name.starts_with("staging-new-"));
            }
            if (!staging) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        ::kill(pid, SIGKILL);
        const int status = test::wait_for(pid);
        if (status == -SIGKILL && staging && !fs::exists(folder)) ++killed_while_staging;
        // Whatever it left, the folder is either absent or complete: never trusted half made.
        if (fs::exists(folder)) EXPECT_EQ(detail::bundle_folder_problem(folder, bundle, true), "");
    }
    EXPECT_GT(killed_while_staging, 0) << "no worker was killed while writing its folder";
    // The next maker reclaims what the killed ones left and makes the folder.
    fs::remove_all(folder);
    EXPECT_EQ(bundle.folder(), folder);
    EXPECT_EQ(detail::bundle_folder_problem(folder, bundle, true), "");
    EXPECT_EQ(cache.entries(), (std::vector<std::string>{"." + bundle.digest() + ".lock", bundle.digest()}));
}

TEST(BundleFolder, CompileReadsTheFolderWithPchAndKeepsTheFlags) {
    const CacheFolder cache;
    const HeaderBundle bundle = test::sample_folder_bundle(5, 100);
    Program first(test::kSampleFolderSource, SourceType::cxx, options_with(bundle));
    const std::string ptx(first.compile(CodeType::ptx).code());
    EXPECT_TRUE(contains(ptx, "1000")) << ptx;
    EXPECT_EQ(first.pch_status().outcome, PchOutcome::created) << first.pch_status().reason;
    EXPECT_TRUE(fs::exists(cache.bundles() / bundle.digest() / "gen/sub0/h0.h"));
    // The flags (and so the cache key) name no folder and no PCH: the digest stands for them.
    for (const auto& flag : first.flags(CodeType::ptx)) {
        EXPECT_FALSE(flag.starts_with("--include-path")) << flag;
        EXPECT_FALSE(flag.starts_with("--pch")) << flag;
    }
    Program second(std::string(test::kSampleFolderSource) + "// another program\n", SourceType::cxx,
                   options_with(bundle));
    second.compile(CodeType::ptx);
    EXPECT_EQ(second.pch_status().outcome, PchOutcome::used) << second.pch_status().reason;
    // pch = false: the headers stay in memory, as before.
    ProgramOptions no_pch = options_with(bundle);
    no_pch.pch = false;
    Program in_memory(test::kSampleFolderSource, SourceType::cxx, no_pch);
    EXPECT_EQ(std::string(in_memory.compile(CodeType::ptx).code()), ptx);
    EXPECT_EQ(in_memory.pch_status().outcome, PchOutcome::not_attempted);
}

TEST(BundleFolder, NoFolderMeansMemoryAndOneWarning) {
    const CacheFolder cache;
    fs::create_directories(cache.cache().parent_path());
    test::write_file(cache.cache(), "a file where the cache folder should be\n");  // root too
    const HeaderBundle bundle = test::sample_folder_bundle(5, 100);
    test::WarningLog warnings;
    for (int round = 0; round < 2; ++round) {
        Program program(test::kSampleFolderSource, SourceType::cxx, options_with(bundle));
        EXPECT_TRUE(contains(std::string(program.compile(CodeType::ptx).code()), "1000"));
        EXPECT_EQ(program.pch_status().outcome, PchOutcome::not_attempted);
        EXPECT_TRUE(contains(program.pch_status().reason, "read from memory")) << program.pch_status().reason;
    }
    ASSERT_EQ(warnings.seen.size(), 1u);
    EXPECT_EQ(warnings.seen[0].kind, WarningKind::pch_off);
    EXPECT_TRUE(contains(warnings.seen[0].message, "header bundles are read from memory")) << warnings.seen[0].message;
    EXPECT_TRUE(contains(warnings.seen[0].message, cache.cache().string())) << warnings.seen[0].message;
    try {
        bundle.folder();
        ADD_FAILURE() << "a folder under a file";
    } catch (const CacheError& e) {
        EXPECT_TRUE(contains(e.what(), "sample-folder")) << e.what();
    }
}

// A full file system while the folder is written (write fails with ENOSPC, injected): the
// compiles read the headers from memory, one warning says why, the folder is not written again
// by the second compile, and nothing is left behind.
TEST(BundleFolder, FullDiskMeansMemoryAndNoLeftovers) {
    const CacheFolder cache;
    const std::string report = (cache.cache().parent_path() / "faults").string();
    const char* asan = std::getenv("ASAN_OPTIONS");
    const test::ProcessResult result = test::run_process(
        fallback_worker(50, 3000), {{"LD_PRELOAD", (test::executable_dir() / "libcudacore_fault_injection.so").string()},
                                    // Under AddressSanitizer the preloaded library comes before its runtime.
                                    {"ASAN_OPTIONS", std::string(asan ? asan : "") + ":verify_asan_link_order=0"},
                                  {"CUDACORE_FAULT_CALLS", "write"},
                                  {"CUDACORE_FAULT_ERRNO", "ENOSPC"},
                                  {"CUDACORE_FAULT_PATH", "header-bundles"},
                                  {"CUDACORE_FAULT_AFTER", "20"},
                                  {"CUDACORE_FAULT_REPORT", report}});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    // One write failed: the second compile did not write the folder again.
    ASSERT_TRUE(fs::exists(report)) << "no write failed: " << result.out;
    const std::string faults = test::read_file(report);
    EXPECT_EQ(faults.find("write "), 0u) << faults;
    EXPECT_EQ(std::count(faults.begin(), faults.end(), '\n'), 1) << faults;
    EXPECT_TRUE(contains(result.out, "outcome not_attempted")) << result.out;
    EXPECT_TRUE(contains(result.out, "warning precompiled headers are off: header bundles are read from memory")) << result.out;
    EXPECT_TRUE(contains(result.out, "ENOSPC")) << result.out;
    EXPECT_EQ(cache.entries().size(), 1u);  // the digest's lock file: no folder, no staging folder
    for (const std::string& name : cache.entries()) EXPECT_TRUE(name.ends_with(".lock")) << name;
}

TEST(BundleFolder, NamesThatAreNoRelativePathStayInMemory) {
    const CacheFolder cache;
    for (const char* name : {"../escape.h", "/abs/olute.h", "a//b.h", "./x.h"}) {
        const HeaderBundle bundle = HeaderBundle::from_headers({{name, "#define V 1\n"}}, "odd");
        try {
            bundle.folder();
            ADD_FAILURE() << name;
        } catch (const CacheError& e) {
            EXPECT_TRUE(contains(e.what(), name)) << e.what();
        }
        const std::string source = std::string("#include \"") + name + "\"\n__global__ void k(int* o) { *o = V; }\n";
        test::WarningLog warnings;
        Program program(source, SourceType::cxx, options_with(bundle));
        EXPECT_NO_THROW(program.compile(CodeType::ptx)) << name;
    }
    EXPECT_FALSE(fs::exists(cache.cache().parent_path() / "escape.h"));
}

// A quoted include beside its header would find another header in a folder than in memory: such
// a bundle stays in memory, and the compile reads what it always read.
TEST(BundleFolder, QuotedIncludeFoundBesideItStaysInMemory) {
    const CacheFolder cache;
    const HeaderBundle bundle = HeaderBundle::from_headers(
        {{"a/b.h", "#include \"c.h\"\n"}, {"a/c.h", "#define V 7100001\n"}, {"c.h", "#define V 7100002\n"}},
        "beside");
    try {
        bundle.folder();
        ADD_FAILURE() << "a folder for a bundle that reads differently from one";
    } catch (const CacheError& e) {
        EXPECT_TRUE(contains(e.what(), "'a/c.h' beside it in a folder")) << e.what();
    }
    test::WarningLog warnings;
    Program program("#include <a/b.h>\n__global__ void k(int* o) { *o = V; }\n", SourceType::cxx,
                    options_with(bundle));
    EXPECT_TRUE(contains(std::string(program.compile(CodeType::ptx).code()), "7100002"));
    EXPECT_EQ(warnings.seen.size(), 1u);
    // Without the header beside it, the same include reads the same header either way.
    const HeaderBundle plain = HeaderBundle::from_headers(
        {{"a/b.h", "#include \"c.h\"\n"}, {"c.h", "#define V 7100003\n"}}, "plain");
    EXPECT_NO_THROW(plain.folder());
    Program from_folder("#include <a/b.h>\n__global__ void k(int* o) { *o = V; }\n", SourceType::cxx,
                        options_with(plain));
    EXPECT_TRUE(contains(std::string(from_folder.compile(CodeType::ptx).code()), "7100003"));
    EXPECT_NE(from_folder.pch_status().outcome, PchOutcome::not_attempted) << from_folder.pch_status().reason;
}

}  // namespace
