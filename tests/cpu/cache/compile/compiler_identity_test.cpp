// A cache hit names the compilers without opening them (code/compiler_identity.hpp): a disk hit in
// a fresh process maps neither libnvrtc nor libnvJitLink, nor sets up OpenSSL (keys are hashed
// with Nettle: support/sha256.hpp), nor loads the Redis tier's libraries; a library file whose
// name carries no build is opened once and then remembered by its identity (a changed file is
// opened again), and a file whose name says another release than the library answers stores
// nothing under the keys made from that name. Keys name the exact build ("13.0.88"), the one the
// library writes into its own output (code/compiler_build.hpp): another build of the same release,
// a patch upgrade, misses a warm cache.
#include "test_support.hpp"

#include "code/compiler_build.hpp"
#include "code/compiler_identity.hpp"
#include "cudacore/linker.hpp"
#include "cudacore/program.hpp"
#include "loader/compiler_apis.hpp"

#include <sys/stat.h>
#include <sys/types.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

namespace {

using namespace cudacore;
namespace fs = std::filesystem;

const char* const kernel_source = R"(
#include <cuda/std/cstdint>
#include "scale.h"
extern "C" __global__ void scaled(cuda::std::int32_t* out) { *out = SCALE * 3; }
)";

struct ProbeRun {
    bool hit = false;
    bool nvrtc = false;
    bool nvjitlink = false;
    std::string bytes;
    std::string err;
};

class CompilerIdentity : public ::testing::Test {
protected:
    void SetUp() override {
        fs::create_directories(dir.path() / "include");
        std::ofstream(dir.path() / "kernel.cu") << kernel_source;
        std::ofstream(dir.path() / "include" / "scale.h") << "#define SCALE 7\n";
        env["CUDACORE_CACHE_DIR"] = (dir.path() / "cache").string();
    }
    ProbeRun probe(unsigned timeout_seconds = 300) {
        const test::ProcessResult result = test::run_process(
            {test::helper_path("cache_hit_maps_probe").string(), (dir.path() / "cache").string(),
             (dir.path() / "kernel.cu").string(), (dir.path() / "include").string()},
            env, {.timeout_seconds = timeout_seconds});
        EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
        ProbeRun run;
        run.hit = result.out.rfind("hit\n", 0) == 0;
        run.nvrtc = result.out.find("mapped libnvrtc\n") != std::string::npos;
        run.nvjitlink = result.out.find("mapped libnvJitLink\n") != std::string::npos;
        const std::size_t bytes = result.out.find("bytes ");
        run.bytes = bytes == std::string::npos ? "" : result.out.substr(bytes);
        run.err = result.err;
        return run;
    }
    // A copy of the library NVRTC (or nvJitLink) opens from, named `name` in this test's folder,
    // which the probe is told to open.
    fs::path copy_library(bool nvrtc, const std::string& name) {
        const std::string opened = nvrtc ? detail::nvrtc().path : detail::nvjitlink().path;
        const fs::path from = fs::canonical(opened);
        const fs::path to = dir.path() / "lib" / name;
        fs::create_directories(to.parent_path());
        fs::copy_file(from, to, fs::copy_options::overwrite_existing);
        env[nvrtc ? "CUDACORE_NVRTC_PATH" : "CUDACORE_NVJITLINK_PATH"] = to.string();
        return to;
    }
    test::TempDir dir;
    std::map<std::string, std::string> env;
};

TEST_F(CompilerIdentity, ADiskHitInAFreshProcessOpensNeitherCompiler) {
    const ProbeRun miss = probe();
    ASSERT_FALSE(miss.hit) << miss.err;
    EXPECT_TRUE(miss.nvrtc) << "a miss compiles: the probe must see NVRTC mapped";
    for (int run = 0; run < 5; ++run) {
        const ProbeRun hit = probe();
        ASSERT_TRUE(hit.hit) << hit.err;
        EXPECT_FALSE(hit.nvrtc) << "run " << run << ": a hit mapped libnvrtc";
        EXPECT_FALSE(hit.nvjitlink) << "run " << run << ": a hit mapped libnvJitLink";
        EXPECT_EQ(hit.bytes, miss.bytes);
    }
}

// OpenSSL reads its configuration file (OPENSSL_CONF) when a process first uses it. Named here as
// a FIFO nobody writes to, that read would block: a hit in a process that set OpenSSL up would
// hang until the timeout kills it (as the same process did when keys were hashed with OpenSSL).
TEST_F(CompilerIdentity, ADiskHitInAFreshProcessNeverSetsUpOpenSSL) {
    const ProbeRun miss = probe();
    ASSERT_FALSE(miss.hit) << miss.err;
    const fs::path fifo = dir.path() / "openssl.cnf";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    env["OPENSSL_CONF"] = fifo.string();
    for (int run = 0; run < 3; ++run) {
        const ProbeRun hit = probe(60);
        ASSERT_TRUE(hit.hit) << "run " << run
                             << " (killed after 60 s if it read OpenSSL's configuration): " << hit.err;
        EXPECT_EQ(hit.bytes, miss.bytes);
    }
}

// The Redis tier is a library of its own (cudacore::remote): a program of libcudacore alone, which
// the probe is, maps none of its libraries, on a miss (a compile and a store) or on a hit.
TEST_F(CompilerIdentity, AProgramOfTheCoreLibraryLoadsNoneOfTheRemoteTiersLibraries) {
    for (int run = 0; run < 2; ++run) {
        const test::ProcessResult result = test::run_process(
            {test::helper_path("cache_hit_maps_probe").string(), (dir.path() / "cache").string(),
             (dir.path() / "kernel.cu").string(), (dir.path() / "include").string()},
            env, {.timeout_seconds = 300});
        ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
        EXPECT_EQ(result.out.rfind("hit\n", 0) == 0, run == 1) << result.out;
        for (const char* name : {"libssl", "libcrypto", "libhiredis", "liburiparser"})
            EXPECT_EQ(result.out.find(std::string("mapped ") + name + "\n"), std::string::npos)
                << "run " << run << " mapped " << name << ":\n" << result.out;
    }
}

TEST_F(CompilerIdentity, AFileWithoutAVersionInItsNameIsOpenedOnceThenKnownByItsIdentity) {
    copy_library(true, "libnvrtc.so.13");
    copy_library(false, "libnvJitLink.so.13");
    const fs::path versions = dir.path() / "cache" / "compiler-builds";
    ASSERT_FALSE(probe().hit);
    ASSERT_TRUE(fs::exists(versions)) << "the miss remembers the builds of the files it opened";
    // What is remembered is each library's build, as its own output names it.
    const std::string remembered = test::read_file(versions);
    const std::optional<std::string> nvrtc_build = detail::nvrtc_build(detail::nvrtc());
    ASSERT_TRUE(nvrtc_build);
    EXPECT_NE(remembered.find("/libnvrtc.so.13\t"), std::string::npos) << remembered;
    EXPECT_NE(remembered.find("\t" + *nvrtc_build + "\n"), std::string::npos) << remembered;
    const ProbeRun hit = probe();
    ASSERT_TRUE(hit.hit) << hit.err;
    EXPECT_FALSE(hit.nvrtc);
    EXPECT_FALSE(hit.nvjitlink);
    // Without what was remembered, the hit opens the libraries to ask them, and remembers again.
    fs::remove(versions);
    const ProbeRun asked = probe();
    ASSERT_TRUE(asked.hit) << asked.err;
    EXPECT_TRUE(asked.nvrtc);
    EXPECT_TRUE(fs::exists(versions));
    EXPECT_FALSE(probe().nvrtc);
    // A file written again (its change time moves, whatever its modification time says) is
    // another file: opened again.
    copy_library(true, "libnvrtc.so.13");
    const ProbeRun changed = probe();
    ASSERT_TRUE(changed.hit) << changed.err;
    EXPECT_TRUE(changed.nvrtc);
}

// Damage where the builds are remembered: a FIFO under that name, which an open to append would
// wait on until a reader came. A miss compiles, stores and ends (killed after 60 s if it waited);
// the build is asked of the library again by the next process, which then hits.
TEST_F(CompilerIdentity, AFifoWhereTheBuildsAreRememberedHoldsNoCompile) {
    copy_library(true, "libnvrtc.so.13");
    copy_library(false, "libnvJitLink.so.13");
    const fs::path builds = dir.path() / "cache" / "compiler-builds";
    ASSERT_FALSE(probe().hit);  // makes the cache folder
    fs::remove_all(dir.path() / "cache");
    fs::create_directories(builds.parent_path());
    fs::permissions(builds.parent_path(), fs::perms::owner_all);
    ASSERT_EQ(::mkfifo(builds.c_str(), 0600), 0);
    const ProbeRun miss = probe(60);
    ASSERT_FALSE(miss.hit) << miss.err;
    EXPECT_TRUE(miss.nvrtc);
    const ProbeRun hit = probe(60);
    ASSERT_TRUE(hit.hit) << hit.err;
    EXPECT_EQ(hit.bytes, miss.bytes);
    EXPECT_TRUE(fs::is_fifo(fs::symlink_status(builds)));
}

// A patch upgrade of either library under a warm cache: the same release, another build. The
// build is told here by the file's name (a toolkit's libnvrtc.so.13.0.88); the entries the other
// build made are not served.
TEST_F(CompilerIdentity, AnotherBuildOfTheSameReleaseMissesAWarmCache) {
    copy_library(true, "libnvrtc.so.13");
    copy_library(false, "libnvJitLink.so.13");
    ASSERT_FALSE(probe().hit);
    ASSERT_TRUE(probe().hit);
    for (const bool nvrtc : {true, false}) {
        SCOPED_TRACE(nvrtc ? "NVRTC" : "nvJitLink");
        const std::optional<std::string> build =
            nvrtc ? detail::nvrtc_build(detail::nvrtc()) : detail::nvjitlink_build(detail::nvjitlink());
        ASSERT_TRUE(build);
        const std::string release = build->substr(0, build->rfind('.'));
        const std::string patch = build->substr(build->rfind('.') + 1);
        const std::string other = release + "." + std::to_string(std::stoul(patch) + 1);
        copy_library(nvrtc, std::string(nvrtc ? "libnvrtc" : "libnvJitLink") + ".so." + other);
        const ProbeRun upgraded = probe();
        EXPECT_FALSE(upgraded.hit) << "build " << other << " was served the entry build " << *build << " made";
        EXPECT_TRUE(probe().hit) << "its own entry, stored under its build";
        copy_library(nvrtc, std::string(nvrtc ? "libnvrtc" : "libnvJitLink") + ".so.13");
        EXPECT_TRUE(probe().hit) << "back to build " << *build;
    }
}

TEST_F(CompilerIdentity, ANameThatSaysAnotherVersionStoresNothingUnderItsKeys) {
    // The name says 13.99; the library answers its own version when the miss opens it.
    copy_library(true, "libnvrtc.so.13.99.1");
    for (int run = 0; run < 2; ++run) {
        const ProbeRun miss = probe();
        EXPECT_FALSE(miss.hit) << "run " << run;
        EXPECT_NE(miss.err.find("not cached"), std::string::npos) << miss.err;
        EXPECT_NE(miss.err.find("not the version its file named"), std::string::npos) << miss.err;
    }
}

// The keys' build of each library in this process is the one its compile or link output names,
// read here from code made the ordinary way, not from the probe's.
TEST(CompilerBuild, KeysNameTheBuildTheLibrariesWriteIntoTheirOutput) {
    Program program("extern \"C\" __global__ void k(int* p) { *p = 1; }", SourceType::cxx,
                    {.arch = "sm_90"});
    const std::optional<std::string> nvrtc = detail::build_named_in(program.compile(CodeType::ptx).code());
    ASSERT_TRUE(nvrtc);
    EXPECT_EQ(detail::compiler_version_in_keys(detail::Compiler::nvrtc), *nvrtc);
    ASSERT_TRUE(detail::nvjitlink_available()) << "the toolkit's nvJitLink";
    const ObjectCode ptx = program.compile(CodeType::ptx);
    const ObjectCode cubin = Linker({ptx}, {.arch = "sm_90"}).link(CodeType::cubin);
    const std::optional<std::string> nvjitlink = detail::build_named_in(cubin.code());
    ASSERT_TRUE(nvjitlink) << "the linked cubin's .note.nv.tkinfo names its build";
    EXPECT_EQ(detail::compiler_version_in_keys(detail::Compiler::nvjitlink), *nvjitlink);
    EXPECT_EQ(nvjitlink->substr(0, nvjitlink->rfind('.')),
              std::to_string(detail::nvjitlink().major) + "." + std::to_string(detail::nvjitlink().minor));
}

// NVVM IR keys name libNVVM's build as its PTX names it, not nvvmVersion's "2.0", which two
// toolkits share.
TEST(CompilerBuild, NvvmKeysNameTheBuildLibNvvmWritesIntoItsPtx) {
    Program program(test::read_test_data("nvvm/scale.ll"), SourceType::nvvm, {.arch = "sm_90"});
    const std::optional<std::string> build = detail::build_named_in(program.compile(CodeType::ptx).code());
    ASSERT_TRUE(build);
    EXPECT_EQ(detail::nvvm_build_in_keys(), *build);
}

// A disk cache opened after the first key (`cudacore cache import` into a new folder does so) is
// told the builds the process knows, for libraries whose names carry none: the next process
// there need not open them.
TEST(CompilerBuild, ACacheFolderOpenedAfterTheFirstKeyIsToldTheBuildsKnown) {
    test::TempDir dir;
    const std::string nvrtc_build = detail::compiler_version_in_keys(detail::Compiler::nvrtc);
    ASSERT_EQ(std::count(nvrtc_build.begin(), nvrtc_build.end(), '.'), 2) << nvrtc_build;
    detail::keep_compiler_versions_in(dir.path());
    const fs::path real = fs::canonical(detail::nvrtc().path);
    const fs::path builds = dir.path() / "compiler-builds";
    const std::string remembered = fs::exists(builds) ? test::read_file(builds) : "";
    const std::size_t line = remembered.find(real.string() + "\t");
    if (!detail::version_from_library_name(real.filename().string()).empty()) {
        EXPECT_EQ(line, std::string::npos) << "a name that carries the build needs no line:\n" << remembered;
        return;
    }
    ASSERT_NE(line, std::string::npos) << remembered;
    const std::size_t end = remembered.find('\n', line);
    EXPECT_EQ(remembered.substr(remembered.rfind('\t', end) + 1, end - remembered.rfind('\t', end) - 1), nvrtc_build);
}

TEST(CompilerBuild, IsReadFromTheToolsLine) {
    EXPECT_EQ(detail::build_named_in("// Cuda compilation tools, release 13.0, V13.0.88\n"), "13.0.88");
    // As in a cubin's .note.nv.tkinfo: strings one after the other.
    const char note[] = "ptxas\0Cuda compilation tools, release 12.9, V12.9.41\0Build";
    EXPECT_EQ(detail::build_named_in(std::string_view(note, sizeof note - 1)), "12.9.41");
    EXPECT_EQ(detail::build_named_in("Cuda compilation tools, release 13.0, V13.1.2"), std::nullopt);
    EXPECT_EQ(detail::build_named_in("Cuda compilation tools, release 13.0, V13.0"), std::nullopt);
    EXPECT_EQ(detail::build_named_in("Cuda compilation tools, release 13.0, V13.0."), std::nullopt);
    EXPECT_EQ(detail::build_named_in("Cuda compilation tools, release 13, V13.0.1"), std::nullopt);
    EXPECT_EQ(detail::build_named_in("Cuda compilation tools, release 13.0 V13.0.1"), std::nullopt);
    EXPECT_EQ(detail::build_named_in("release 13.0, V13.0.88"), std::nullopt);
    EXPECT_EQ(detail::build_named_in(""), std::nullopt);
}

TEST(CompilerVersionFromName, ReadsTheBuildAfterSo) {
    EXPECT_EQ(detail::version_from_library_name("libnvrtc.so.13.0.88"), "13.0.88");
    EXPECT_EQ(detail::version_from_library_name("libnvJitLink.so.13.1.2"), "13.1.2");
    EXPECT_EQ(detail::version_from_library_name("libnvJitLink.so.13.1"), "");
    EXPECT_EQ(detail::version_from_library_name("libnvrtc.so.13.0.88.1"), "");
    EXPECT_EQ(detail::version_from_library_name("libnvrtc.so.13.0.x"), "");
    EXPECT_EQ(detail::version_from_library_name("libnvrtc.so.13"), "");
    EXPECT_EQ(detail::version_from_library_name("libnvrtc.so"), "");
    EXPECT_EQ(detail::version_from_library_name("libnvrtc.so.13.x"), "");
    EXPECT_EQ(detail::version_from_library_name("libnvrtc.so.13."), "");
    EXPECT_EQ(detail::version_from_library_name("libnvrtc.so.1a.2"), "");
}

}  // namespace
