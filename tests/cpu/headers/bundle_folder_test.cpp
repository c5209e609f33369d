// Header bundles written out as folders (HeaderBundle::folder(), used by Program::compile for
// NVRTC's precompiled headers): one folder per digest under $CUDACORE_CACHE_DIR, made by many
// processes at once without leftovers, damaged folders found and replaced, a maker killed
// halfway leaving nothing trusted, compiles reading the folder with PCH, and a compile that falls
// back to memory (with one warning) where no folder can be made. NVRTC runs without a GPU.
#include "after_mkdtemp.hpp"
#include "bundle_folder_sample.hpp"
#include "temporary_cache_folder.hpp"
#include "test_support.hpp"

#include "headers/bundle_folder.hpp"
#include "cudacore/cached_compile.hpp"
#include "cudacore/disk_program_cache.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/program.hpp"
#include "support/owned_folder.hpp"

#include <signal.h>
#include <xxhash.h>
#include <zstd.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

namespace {

using namespace cudacore;
namespace fs = std::filesystem;

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// Each test's own cache folder, removed after it.
using CacheFolder = test::TemporaryCacheFolder;

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
    EXPECT_EQ(folder, cache.bundles() / detail::bundle_folder_name(bundle));
    EXPECT_EQ(detail::bundle_folder_problem(folder, bundle, true), "");
    // Each file opens with the #line that names it as the bundle does.
    EXPECT_EQ(test::read_file(folder / "gen/sub3/h10.h"), "#line 1 \"gen/sub3/h10.h\"\n" + *bundle.find("gen/sub3/h10.h"));
    EXPECT_TRUE(contains(test::read_file(folder / ".cudacore-bundle"), "digest " + bundle.digest()));
    EXPECT_FALSE(fs::exists(folder / "owner.lock"));
    EXPECT_EQ(fs::status(cache.bundles()).permissions() & fs::perms::all, fs::perms::owner_all);
    // Asked again: the same folder, nothing else made.
    EXPECT_EQ(bundle.folder(), folder);
    EXPECT_EQ(cache.entries(), (std::vector<std::string>{"." + detail::bundle_folder_name(bundle) + ".lock", detail::bundle_folder_name(bundle)}));
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
    EXPECT_EQ(cache.entries(), (std::vector<std::string>{"." + detail::bundle_folder_name(bundle) + ".lock", detail::bundle_folder_name(bundle)}));
    EXPECT_EQ(detail::bundle_folder_problem(cache.bundles() / detail::bundle_folder_name(bundle), bundle, true), "");
    std::size_t files = 0;
    for (const auto& entry : fs::recursive_directory_iterator(cache.bundles() / detail::bundle_folder_name(bundle)))
        files += entry.is_regular_file() ? 1 : 0;
    EXPECT_EQ(files, bundle.size() + 1);  // the headers and the manifest
}

TEST(BundleFolder, MakerKilledHalfwayLeavesNothingTrusted) {
    const CacheFolder cache;
    const int headers = 3000, bytes = 4000;
    const HeaderBundle bundle = test::sample_folder_bundle(headers, bytes);
    const fs::path folder = cache.bundles() / detail::bundle_folder_name(bundle);
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
    EXPECT_EQ(cache.entries(), (std::vector<std::string>{"." + detail::bundle_folder_name(bundle) + ".lock", detail::bundle_folder_name(bundle)}));
}

TEST(BundleFolder, CompileReadsTheFolderWithPchAndKeepsTheFlags) {
    const CacheFolder cache;
    const HeaderBundle bundle = test::sample_folder_bundle(5, 100);
    Program first(test::kSampleFolderSource, SourceType::cxx, options_with(bundle));
    const std::string ptx(first.compile(CodeType::ptx).code());
    EXPECT_TRUE(contains(ptx, "1000")) << ptx;
    EXPECT_EQ(first.pch_status().outcome, PchOutcome::created) << first.pch_status().reason;
    EXPECT_TRUE(fs::exists(cache.bundles() / detail::bundle_folder_name(bundle) / "gen/sub0/h0.h"));
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
    const test::ProcessResult result = test::run_process(
        fallback_worker(50, 3000), test::fault_injection_env({{"CUDACORE_FAULT_CALLS", "write"},
                                                              {"CUDACORE_FAULT_ERRNO", "ENOSPC"},
                                                              {"CUDACORE_FAULT_PATH", "header-bundles"},
                                                              {"CUDACORE_FAULT_AFTER", "20"},
                                                              {"CUDACORE_FAULT_REPORT", report}}));
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

// A quoted include with a header beside its includer: from_headers names it by its full name
// (C's rule), so the bundle reads the same header from a folder as from memory, and gets one.
TEST(BundleFolder, QuotedIncludeFoundBesideItReadsTheSameFromFolderAndMemory) {
    const CacheFolder cache;
    const HeaderBundle bundle = HeaderBundle::from_headers(
        {{"a/b.h", "#include \"c.h\"\n"}, {"a/c.h", "#define V 7100001\n"}, {"c.h", "#define V 7100002\n"}},
        "beside");
    EXPECT_NO_THROW(bundle.folder());
    test::WarningLog warnings;
    Program program("#include <a/b.h>\n__global__ void k(int* o) { *o = V; }\n", SourceType::cxx,
                    options_with(bundle));
    const std::string ptx(program.compile(CodeType::ptx).code());
    EXPECT_TRUE(contains(ptx, "7100001")) << ptx;
    EXPECT_NE(program.pch_status().outcome, PchOutcome::not_attempted) << program.pch_status().reason;
    EXPECT_TRUE(warnings.seen.empty()) << warnings.seen.front().message;
    ProgramOptions in_memory = options_with(bundle);
    in_memory.pch = false;
    Program from_memory("#include <a/b.h>\n__global__ void k(int* o) { *o = V; }\n", SourceType::cxx, in_memory);
    EXPECT_EQ(std::string(from_memory.compile(CodeType::ptx).code()), ptx);
    // Without the header beside it, the same include reads the same header either way.
    const HeaderBundle plain = HeaderBundle::from_headers(
        {{"a/b.h", "#include \"c.h\"\n"}, {"c.h", "#define V 7100003\n"}}, "plain");
    EXPECT_NO_THROW(plain.folder());
    Program from_folder("#include <a/b.h>\n__global__ void k(int* o) { *o = V; }\n", SourceType::cxx,
                        options_with(plain));
    EXPECT_TRUE(contains(std::string(from_folder.compile(CodeType::ptx).code()), "7100003"));
    EXPECT_NE(from_folder.pch_status().outcome, PchOutcome::not_attempted) << from_folder.pch_status().reason;
}

// A bundle saved before quoted includes were rewritten (exactly: as read from such a file) cannot
// be a folder where one would read another header than memory does; the check costs each
// include its own length, not its folder's (a 1 MiB folder name and 100,000 includes, a few
// kilobytes compressed, took about 100 GB of copying under the process-wide lock).
// The bytes of a bundle file holding `headers` (sorted by name) as given, with no rule applied:
// as a file saved before from_headers rewrote quoted includes beside their includer.
std::string bundle_file_as_given(const std::vector<BundledHeader>& headers, const std::string& name) {
    auto put = [](std::string& out, std::uint64_t value, int bytes) {
        for (int i = 0; i < bytes; ++i) out += static_cast<char>(value >> (8 * i));
    };
    std::string payload;
    put(payload, name.size(), 4);
    payload += name;
    for (const BundledHeader& header : headers) {
        put(payload, header.name.size(), 4);
        payload += header.name;
        put(payload, header.content.size(), 8);
        payload += header.content;
    }
    std::string compressed(ZSTD_compressBound(payload.size()), '\0');
    compressed.resize(ZSTD_compress(compressed.data(), compressed.size(), payload.data(), payload.size(), 1));
    std::string out("\x89" "CCHDR\r\n", 8);
    put(out, 1, 4);
    put(out, headers.size(), 4);
    put(out, payload.size(), 8);
    put(out, compressed.size(), 8);
    XXH3_state_t state;
    XXH3_64bits_reset(&state);
    XXH3_64bits_update(&state, out.data(), out.size());
    XXH3_64bits_update(&state, compressed.data(), compressed.size());
    put(out, XXH3_64bits_digest(&state), 8);
    return out + compressed;
}

TEST(BundleFolder, AnOldBundleWhoseQuotedIncludesAFolderWouldReadOtherwiseIsRefused) {
    const CacheFolder cache;
    const HeaderBundle old = HeaderBundle::deserialize(bundle_file_as_given(
        {{"a/b.h", "#include \"c.h\"\n"}, {"a/c.h", "#define V 1\n"}, {"c.h", "#define V 2\n"}}, "old"));
    try {
        old.folder();
        ADD_FAILURE() << "a folder was made";
    } catch (const CacheError& e) {
        EXPECT_TRUE(contains(e.what(), "includes \"c.h\", which is 'a/c.h' beside it in a folder but 'c.h' in memory"))
            << e.what();
    }
    const std::string folder(1 << 20, 'f');
    std::string includes;
    for (int i = 0; i < 100000; ++i) includes += "#include \"x\"\n";
    const HeaderBundle deep = HeaderBundle::deserialize(bundle_file_as_given({{folder + "/h.h", includes}, {"x", ""}}, "deep"));
    const auto start = std::chrono::steady_clock::now();
    try {
        deep.folder();  // no problem with its includes; the name itself is too long for a folder
    } catch (const Error& e) {
        EXPECT_FALSE(contains(e.what(), "beside it in a folder")) << e.what();
    }
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
}

// A header of the same name earlier on the include path (an include_path folder) does not shadow
// the bundle's: the bundle folders go first, and the code equals that of the in-memory compile.
TEST(BundleFolder, BundleHeaderWinsOverOneOfTheSameNameOnTheIncludePath) {
    const CacheFolder cache;
    const test::TempDir shadow;
    fs::create_directories(shadow.path() / "gen/sub0");
    test::write_file(shadow.path() / "gen/sub0/h0.h", "#define VALUE_0 7300042\n");
    const HeaderBundle bundle = test::sample_folder_bundle(5, 100);
    ProgramOptions options = options_with(bundle);
    options.include_path = {shadow.path().string()};
    Program from_folder(test::kSampleFolderSource, SourceType::cxx, options);
    const std::string ptx(from_folder.compile(CodeType::ptx).code());
    EXPECT_EQ(from_folder.pch_status().outcome, PchOutcome::created) << from_folder.pch_status().reason;
    EXPECT_TRUE(contains(ptx, "1000")) << ptx;
    EXPECT_FALSE(contains(ptx, "7300042")) << ptx;
    ProgramOptions in_memory = options;
    in_memory.pch = false;
    Program from_memory(test::kSampleFolderSource, SourceType::cxx, in_memory);
    EXPECT_EQ(std::string(from_memory.compile(CodeType::ptx).code()), ptx);
    // Without the bundle the same source reads the include_path's copy: it was there to be found.
    ProgramOptions without = options;
    without.header_bundles.clear();
    Program plain(test::kSampleFolderSource, SourceType::cxx, without);
    EXPECT_TRUE(contains(std::string(plain.compile(CodeType::ptx).code()), "7300042"));
}

// A quoted include of the main source is looked for beside it (the folder of the program's name)
// before any include folder, while headers in memory come first: a file there of a bundled name
// keeps the bundle in memory for that compile, so that the bundle's copy wins as it does from
// memory, and the code is the in-memory compile's. Without such a file the folder is used.
TEST(BundleFolder, BundleHeaderWinsOverAFileBesideTheSource) {
    const CacheFolder cache;
    const test::TempDir project;
    const HeaderBundle bundle = HeaderBundle::from_headers(
        {{"cube.h", "template <class T> __device__ T cube(T x) { return x * x * x; }\n"},
         {"lib/scale.h", "#define SCALE 7400001\n"}},
        "shadowed");
    const std::string source = "#include \"cube.h\"\n#include \"lib/scale.h\"\n"
                               "extern \"C\" __global__ void k(int* o) { *o = cube(*o) + SCALE; }\n";
    ProgramOptions options = options_with(bundle);
    options.name = (project.path() / "kernel.cu").string();
    ProgramOptions in_memory = options;
    in_memory.pch = false;
    Program from_memory(source, SourceType::cxx, in_memory);
    const std::string expected(from_memory.compile(CodeType::ptx).code());
    ASSERT_TRUE(contains(expected, "7400001")) << expected;
    Program clean(source, SourceType::cxx, options);
    EXPECT_EQ(std::string(clean.compile(CodeType::ptx).code()), expected);
    EXPECT_NE(clean.pch_status().outcome, PchOutcome::not_attempted) << clean.pch_status().reason;
    for (const char* name : {"cube.h", "lib/scale.h"}) {
        SCOPED_TRACE(name);
        fs::create_directories((project.path() / name).parent_path());
        test::write_file(project.path() / name, "#define SHADOW 1\n");
        test::WarningLog warnings;
        Program shadowed(source, SourceType::cxx, options);
        EXPECT_EQ(std::string(shadowed.compile(CodeType::ptx).code()), expected);
        EXPECT_EQ(shadowed.pch_status().outcome, PchOutcome::not_attempted);
        EXPECT_TRUE(contains(shadowed.pch_status().reason, (project.path() / name).string() + "' beside the source"))
            << shadowed.pch_status().reason;
        ASSERT_EQ(warnings.seen.size(), 1u);
        EXPECT_EQ(warnings.seen[0].kind, WarningKind::pch_off);
        fs::remove(project.path() / name);
    }
}

// An angle include is never looked up beside the source: a file there of a bundled name that the
// source includes only with <>, or not at all, leaves the folders and PCH on, and the bundle's
// copy is read. A quoted include of a file beside the source that is no bundle's may reach any
// bundled name from there, so then every name counts again.
TEST(BundleFolder, AFileBesideTheSourceShadowsOnlyQuotedIncludes) {
    const CacheFolder cache;
    const test::TempDir project;
    const HeaderBundle bundle = HeaderBundle::from_headers(
        {{"cube.h", "template <class T> __device__ T cube(T x) { return x * x * x; }\n"},
         {"lib/scale.h", "#define SCALE 7400001\n"},
         {"unused.h", "#define UNUSED 1\n"}},
        "angle");
    const std::string source = "#include <cube.h>\n#include <lib/scale.h>\n"
                               "extern \"C\" __global__ void k(int* o) { *o = cube(*o) + SCALE; }\n";
    ProgramOptions options = options_with(bundle);
    options.name = (project.path() / "kernel.cu").string();
    ProgramOptions in_memory = options;
    in_memory.pch = false;
    const std::string expected(Program(source, SourceType::cxx, in_memory).compile(CodeType::ptx).code());
    ASSERT_TRUE(contains(expected, "7400001")) << expected;
    fs::create_directories(project.path() / "lib");
    for (const char* name : {"cube.h", "lib/scale.h", "unused.h"})
        test::write_file(project.path() / name, "#define SHADOW 1\n");
    {
        test::WarningLog warnings;
        Program angle(source, SourceType::cxx, options);
        EXPECT_EQ(std::string(angle.compile(CodeType::ptx).code()), expected);
        EXPECT_NE(angle.pch_status().outcome, PchOutcome::not_attempted) << angle.pch_status().reason;
        EXPECT_TRUE(warnings.seen.empty()) << warnings.seen.front().message;
    }
    // A quoted include of a header beside the source that is no bundle's: "unused.h" could be
    // reached from it, so the bundle stays in memory.
    test::write_file(project.path() / "local.h", "#define LOCAL 2\n");
    test::WarningLog warnings;
    Program quoted_local("#include \"local.h\"\n" + source, SourceType::cxx, options);
    quoted_local.compile(CodeType::ptx);
    EXPECT_EQ(quoted_local.pch_status().outcome, PchOutcome::not_attempted);
    EXPECT_TRUE(contains(quoted_local.pch_status().reason, "' beside the source")) << quoted_local.pch_status().reason;
    ASSERT_EQ(warnings.seen.size(), 1u);
    EXPECT_EQ(warnings.seen[0].kind, WarningKind::pch_off);
}

// CUDACORE_DISABLE_CACHE: nothing in the cache folder; the bundle folder is the process's own,
// in the temporary directory, still read with PCH, and gone when the process ends.
TEST(BundleFolder, DisabledCacheKeepsTheFolderPrivateAndRemovesItAtExit) {
    const CacheFolder cache;
    const test::TempDir temporary;
    const test::ProcessResult result = test::run_process(
        worker(5, 100, /*compile=*/true), {{"CUDACORE_DISABLE_CACHE", "1"}, {"TMPDIR", temporary.path().string()}});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    const fs::path folder = result.out.substr(0, result.out.find('\n'));
    EXPECT_EQ(folder.parent_path().parent_path(), temporary.path()) << folder;
    EXPECT_TRUE(folder.parent_path().filename().string().starts_with("cudacore-bundles-")) << folder;
    EXPECT_EQ(folder.filename(), detail::bundle_folder_name(test::sample_folder_bundle(5, 100)));
    EXPECT_FALSE(fs::exists(cache.cache())) << "the cache folder was made";
    std::vector<std::string> left;
    for (const auto& entry : fs::directory_iterator(temporary.path())) left.push_back(entry.path().filename());
    EXPECT_TRUE(left.empty()) << left.front();
    // "0" and "" leave the cache on: the folder is the shared one.
    const test::ProcessResult shared = test::run_process(
        worker(5, 100), {{"CUDACORE_DISABLE_CACHE", "0"}, {"TMPDIR", temporary.path().string()}});
    ASSERT_EQ(shared.exit_code, 0) << shared.err;
    EXPECT_EQ(shared.out, (cache.bundles() / detail::bundle_folder_name(test::sample_folder_bundle(5, 100))).string() + "\n");
}

// CUDACORE_DISABLE_CACHE and a process killed while it has its private bundle folder: the next
// process that makes one removes what the killed one left.
TEST(BundleFolder, DisabledCacheFolderOfAKilledProcessIsReclaimed) {
    const CacheFolder cache;
    const test::TempDir temporary;
    auto private_folders = [&] {
        std::vector<std::string> found;
        std::error_code error;
        for (const auto& entry : fs::directory_iterator(temporary.path(), error)) {
            const std::string name = entry.path().filename();
            if (name.starts_with("cudacore-bundles-") && !name.starts_with("cudacore-bundles-new-")) found.push_back(name);
        }
        return found;
    };
    const char* old_tmpdir = std::getenv("TMPDIR");
    const std::string previous = old_tmpdir ? old_tmpdir : "";
    ::setenv("TMPDIR", temporary.path().c_str(), 1);
    ::setenv("CUDACORE_DISABLE_CACHE", "1", 1);
    const pid_t pid = test::spawn(worker(3000, 4000));  // big enough to be caught writing it
    ::unsetenv("CUDACORE_DISABLE_CACHE");
    if (old_tmpdir) ::setenv("TMPDIR", previous.c_str(), 1);
    else ::unsetenv("TMPDIR");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (private_folders().empty() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ::kill(pid, SIGKILL);
    test::wait_for(pid);
    ASSERT_EQ(private_folders().size(), 1u) << "the worker made no private folder before it was killed";
    const test::ProcessResult next = test::run_process(
        worker(5, 100, /*compile=*/true), {{"CUDACORE_DISABLE_CACHE", "1"}, {"TMPDIR", temporary.path().string()}});
    ASSERT_EQ(next.exit_code, 0) << next.out << next.err;
    std::vector<std::string> left;
    for (const auto& entry : fs::directory_iterator(temporary.path())) left.push_back(entry.path().filename());
    EXPECT_TRUE(left.empty()) << left.front();
    EXPECT_FALSE(fs::exists(cache.cache()));
}

// HeaderBundle::remove_folders (cache clear): every folder no compile holds goes, with its lock
// file; a held one stays and is named; other names are left alone.
TEST(BundleFolder, RemoveFoldersTakesAllButThoseInUse) {
    const CacheFolder cache;
    const HeaderBundle first = test::sample_folder_bundle(5, 100), second = test::sample_folder_bundle(6, 100);
    EXPECT_EQ(HeaderBundle::remove_folders(cache.cache()).removed, 0u);  // no folder yet
    first.folder();
    second.folder();
    test::write_file(cache.bundles() / "notes.txt", "a user's file\n");
    {
        const detail::HeldBundleFolder held = detail::hold_bundle_folder(first);
        const HeaderBundle::FolderRemoval removal = HeaderBundle::remove_folders(cache.cache());
        EXPECT_EQ(removal.removed, 1u);
        EXPECT_EQ(removal.in_use, std::vector<fs::path>{held.path});
        EXPECT_EQ(cache.entries(), (std::vector<std::string>{"." + detail::bundle_folder_name(first) + ".lock", detail::bundle_folder_name(first), "notes.txt"}));
        EXPECT_EQ(detail::bundle_folder_problem(held.path, first, true), "");
    }
    const HeaderBundle::FolderRemoval removal = HeaderBundle::remove_folders(cache.cache());
    EXPECT_EQ(removal.removed, 1u);
    EXPECT_TRUE(removal.in_use.empty());
    EXPECT_EQ(cache.entries(), std::vector<std::string>{"notes.txt"});
    // Made again by the next use; DiskProgramCache::clear removes it too.
    EXPECT_EQ(detail::bundle_folder_problem(first.folder(), first, true), "");
    DiskProgramCache(cache.cache()).clear();
    EXPECT_EQ(cache.entries(), std::vector<std::string>{"notes.txt"});
}

// `cudacore cache clear` removes the bundle folders, even where no program cache exists yet.
TEST(BundleFolder, CacheClearCommandRemovesThem) {
    const CacheFolder cache;
    const HeaderBundle bundle = test::sample_folder_bundle(5, 100);
    bundle.folder();
    const fs::path folder = cache.bundles() / detail::bundle_folder_name(bundle);
    // A cache folder holding only bundle folders is no program cache yet, not a foreign folder.
    const test::ProcessResult stats = test::run_process({test::cli_path().string(), "cache", "stats"});
    ASSERT_EQ(stats.exit_code, 0) << stats.out << stats.err;
    EXPECT_TRUE(contains(stats.out, "(no program cache yet)")) << stats.out;
    {
        // Held as a compile holds it: another process's clear leaves it, and says so.
        const detail::HeldBundleFolder held = detail::hold_bundle_folder(bundle);
        const test::ProcessResult left = test::run_process({test::cli_path().string(), "cache", "clear"});
        ASSERT_EQ(left.exit_code, 0) << left.out << left.err;
        EXPECT_TRUE(contains(left.out, "left " + folder.string() + ": a compile is reading it")) << left.out;
        EXPECT_EQ(detail::bundle_folder_problem(folder, bundle, true), "");
    }
    const test::ProcessResult cleared = test::run_process({test::cli_path().string(), "cache", "clear"});
    ASSERT_EQ(cleared.exit_code, 0) << cleared.out << cleared.err;
    EXPECT_TRUE(contains(cleared.out, "removed 1 header bundle folders from " + cache.bundles().string()))
        << cleared.out;
    EXPECT_TRUE(cache.entries().empty());
}

// A maker stalled after making its staging folder (as SIGSTOP holds it) for longer than
// kUnfinishedFolderAge, whose folder another process reclaims meanwhile, makes the bundle folder
// all the same.
TEST(BundleFolder, AStagingFolderReclaimedWhileItsMakerStalledIsMadeAgain) {
    const CacheFolder cache;
    const HeaderBundle bundle = test::sample_folder_bundle(5, 100);
    std::vector<fs::path> reclaimed;
    const test::AfterMkdtemp stall("staging-new-", [&](const fs::path& made) {
        if (!reclaimed.empty()) return;  // the first staging folder only
        test::age_folder(made, std::chrono::seconds(60));
        detail::reclaim_abandoned_folders(made.parent_path(), "staging-");  // another process's
        if (!fs::exists(made)) reclaimed.push_back(made);
    });
    fs::path folder;
    try {
        folder = bundle.folder();
    } catch (const std::exception& e) {
        FAIL() << e.what();
    }
    ASSERT_EQ(reclaimed.size(), 1u) << "the reclaimer left the stalled folder";
    EXPECT_EQ(detail::bundle_folder_problem(folder, bundle, true), "");
    EXPECT_EQ(cache.entries(), (std::vector<std::string>{"." + detail::bundle_folder_name(bundle) + ".lock", detail::bundle_folder_name(bundle)}));
}

// What can stand under a digest's lock file's name by damage: a folder (with something in it),
// a symbolic link (to a file that must survive).
enum class LockDamage { folder, link };
void damage_lock(const CacheFolder& cache, const HeaderBundle& bundle, LockDamage damage) {
    const fs::path lock = cache.bundles() / ("." + detail::bundle_folder_name(bundle) + ".lock");
    fs::remove(lock);
    if (damage == LockDamage::folder) {
        fs::create_directory(lock);
        test::write_file(lock / "inside", "x");
    } else {
        test::write_file(cache.cache() / "target", "kept");
        fs::create_symlink(cache.cache() / "target", lock);
    }
}

// A compile with a digest whose lock file is damaged repairs it and uses the folder, instead of
// falling back to memory at every compile.
TEST(BundleFolder, ALockFileThatIsAFolderOrALinkIsRepairedByTheNextUse) {
    for (const LockDamage damage : {LockDamage::folder, LockDamage::link}) {
        const CacheFolder cache;
        const HeaderBundle bundle = test::sample_folder_bundle(5, 100);
        bundle.folder();
        damage_lock(cache, bundle, damage);
        for (int use = 0; use < 2; ++use) {
            try {
                const detail::HeldBundleFolder held = detail::hold_bundle_folder(bundle);
                EXPECT_EQ(detail::bundle_folder_problem(held.path, bundle, true), "");
            } catch (const std::exception& e) {
                ADD_FAILURE() << "use " << use << ": " << e.what();
            }
        }
        EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(cache.bundles() / ("." + detail::bundle_folder_name(bundle) + ".lock"))));
        EXPECT_EQ(cache.entries(), (std::vector<std::string>{"." + detail::bundle_folder_name(bundle) + ".lock", detail::bundle_folder_name(bundle)}));
        if (damage == LockDamage::link) EXPECT_EQ(test::read_file(cache.cache() / "target"), "kept");
    }
}

// A program cache with one entry (a compile of the sample through it) and the folders of two
// bundles; returns the bundles.
std::vector<HeaderBundle> cache_with_entries_and_folders(const CacheFolder& cache) {
    const HeaderBundle first = test::sample_folder_bundle(5, 100), second = test::sample_folder_bundle(6, 100);
    DiskProgramCache disk(cache.cache());
    Program program(test::kSampleFolderSource, SourceType::cxx, options_with(first));
    compile_cached(program, CodeType::ptx, {}, {.cache = &disk});  // from memory: no folder
    first.folder();
    second.folder();
    EXPECT_GT(disk.stats().entries, 0u);
    return {first, second};
}

// `cudacore cache clear` with a damaged lock file repairs it, says so, and removes everything:
// the bundle folders and the program cache's entries.
TEST(BundleFolder, CacheClearRepairsADamagedLockFileAndRemovesEverything) {
    for (const LockDamage damage : {LockDamage::folder, LockDamage::link}) {
        const CacheFolder cache;
        const std::vector<HeaderBundle> bundles = cache_with_entries_and_folders(cache);
        damage_lock(cache, bundles[0], damage);
        const test::ProcessResult cleared = test::run_process({test::cli_path().string(), "cache", "clear"});
        EXPECT_EQ(cleared.exit_code, 0) << cleared.out << cleared.err;
        const fs::path lock = cache.bundles() / ("." + detail::bundle_folder_name(bundles[0]) + ".lock");
        EXPECT_TRUE(contains(cleared.err, "repaired: '" + lock.string() + "' was a")) << cleared.err;
        EXPECT_TRUE(contains(cleared.out, "removed 2 header bundle folders")) << cleared.out;
        EXPECT_EQ(DiskProgramCache(cache.cache()).stats().entries, 0u);
        EXPECT_TRUE(cache.entries().empty()) << cache.entries().front();
    }
}

// A lock file that cannot be opened (an I/O error, injected) leaves its folder, named with the
// call and the error, and the clear goes on: the other folder and the program cache's entries go,
// and the command ends with status 1.
TEST(BundleFolder, CacheClearGoesOnPastALockItCannotOpenAndNamesIt) {
    const CacheFolder cache;
    const std::vector<HeaderBundle> bundles = cache_with_entries_and_folders(cache);
    const std::string lock_name = "." + detail::bundle_folder_name(bundles[0]) + ".lock";
    const test::ProcessResult cleared = test::run_process(
        {test::cli_path().string(), "cache", "clear"},
        test::fault_injection_env(
            {{"CUDACORE_FAULT_CALLS", "open"}, {"CUDACORE_FAULT_ERRNO", "EIO"}, {"CUDACORE_FAULT_PATH", lock_name}}));
    EXPECT_EQ(cleared.exit_code, 1) << cleared.out << cleared.err;
    EXPECT_TRUE(contains(cleared.err, "open '" + (cache.bundles() / lock_name).string() + "' failed: EIO"))
        << cleared.err;
    EXPECT_EQ(DiskProgramCache(cache.cache()).stats().entries, 0u);
    EXPECT_EQ(cache.entries(), (std::vector<std::string>{lock_name, detail::bundle_folder_name(bundles[0])}));
}

// Compiles of one bundle in a loop on one thread while another runs `fn` in a loop: each compile
// gives the in-memory compile's code. Returns the PCH reasons of the compiles.
template <class Fn>
std::vector<std::string> compile_while(const HeaderBundle& bundle, int compiles, Fn&& fn) {
    ProgramOptions no_pch = options_with(bundle);
    no_pch.pch = false;
    const std::string expected(Program(test::kSampleFolderSource, SourceType::cxx, no_pch).compile(CodeType::ptx).code());
    std::atomic<bool> done{false};
    std::thread other([&] {
        while (!done) fn();
    });
    std::vector<std::string> reasons;
    for (int i = 0; i < compiles; ++i) {
        Program program(test::kSampleFolderSource + std::string("// ") + std::to_string(i) + "\n", SourceType::cxx,
                        options_with(bundle));
        try {
            EXPECT_EQ(std::string(program.compile(CodeType::ptx).code()), expected) << "compile " << i;
        } catch (const std::exception& e) {
            ADD_FAILURE() << "compile " << i << ": " << e.what();
        }
        reasons.push_back(program.pch_status().reason);
    }
    done = true;
    other.join();
    return reasons;
}

// A cache clear never removes a folder a compile reads: no compile has to be made again.
TEST(BundleFolder, RemoveFoldersWhileCompilingBreaksNoCompile) {
    const CacheFolder cache;
    const HeaderBundle bundle = test::sample_folder_bundle(30, 2000);
    std::uint64_t removed = 0;
    test::WarningLog warnings;
    const std::vector<std::string> reasons =
        compile_while(bundle, 12, [&] { removed += HeaderBundle::remove_folders(cache.cache()).removed; });
    for (const std::string& reason : reasons) EXPECT_FALSE(contains(reason, "compiled again")) << reason;
    EXPECT_TRUE(warnings.seen.empty()) << warnings.seen.front().message;
    std::cout << removed << " folders removed between compiles\n";
}

// A folder removed by hand while NVRTC reads it: the compile notices (the folder fails its
// check afterwards) and compiles again from memory, giving the same code.
TEST(BundleFolder, FolderRemovedByHandDuringACompileStillGivesTheCode) {
    const CacheFolder cache;
    const HeaderBundle bundle = test::sample_folder_bundle(30, 2000);
    const fs::path folder = cache.bundles() / detail::bundle_folder_name(bundle);
    test::WarningLog warnings;
    const std::vector<std::string> reasons = compile_while(bundle, 12, [&] {
        std::error_code ignored;
        fs::remove_all(folder, ignored);
    });
    const auto again = std::count_if(reasons.begin(), reasons.end(),
                                     [](const std::string& reason) { return contains(reason, "compiled again"); });
    std::cout << again << " of " << reasons.size() << " compiles compiled again from memory\n";
}

// Many processes at once, one temporary directory and one cache folder, all compiling with the
// same bundle for the first time: all succeed with the same code, one folder is made, and no
// staging folder or PCH folder is left.
TEST(BundleFolder, SixteenProcessesCompilingAtOnceShareOneFolder) {
    const CacheFolder cache;
    const test::TempDir temporary;
    const HeaderBundle bundle = test::sample_folder_bundle(5, 100);
    std::vector<test::ProcessResult> results(16);
    std::vector<std::thread> starters;
    for (auto& result : results) {
        starters.emplace_back([&result, &temporary] {
            result = test::run_process(worker(5, 100, /*compile=*/true), {{"TMPDIR", temporary.path().string()}},
                                       {.timeout_seconds = 120});
        });
    }
    for (std::thread& starter : starters) starter.join();
    const std::string expected_folder = (cache.bundles() / detail::bundle_folder_name(bundle)).string() + "\n";
    for (const test::ProcessResult& result : results) {
        ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
        EXPECT_TRUE(result.out.starts_with(expected_folder)) << result.out;
        EXPECT_TRUE(contains(result.out, "\ncode ")) << result.out;
        EXPECT_EQ(result.out, results.front().out);  // the same folder and the same code
    }
    EXPECT_EQ(cache.entries(), (std::vector<std::string>{"." + detail::bundle_folder_name(bundle) + ".lock", detail::bundle_folder_name(bundle)}));
    EXPECT_EQ(detail::bundle_folder_problem(cache.bundles() / detail::bundle_folder_name(bundle), bundle, true), "");
    std::vector<std::string> left;
    for (const auto& entry : fs::directory_iterator(temporary.path())) left.push_back(entry.path().filename());
    EXPECT_TRUE(left.empty()) << left.front();
}

}  // namespace
