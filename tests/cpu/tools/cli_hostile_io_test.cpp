// The CLI with failing outputs and hostile inputs: a full disk or device never loses or
// truncates an output, inputs that are not regular files (or are huge) are refused naming the
// file, and a cache that cannot store never fails a compile. Each test makes its own inputs and
// runs the CLI under a memory and time limit.
#include "test_support.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

namespace {

namespace fs = std::filesystem;
using cudacore::test::cli_path;
using cudacore::test::ProcessLimits;
using cudacore::test::ProcessResult;
using cudacore::test::read_file;
using cudacore::test::run_process;
using cudacore::test::TempDir;
using cudacore::test::write_file;

constexpr const char* kKernel = "extern \"C\" __global__ void fill(int* p) { p[threadIdx.x] = 7; }\n";

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

std::size_t count(const std::string& text, const std::string& part) {
    std::size_t n = 0;
    for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
    return n;
}

std::size_t temporaries_in(const fs::path& dir) {
    std::size_t n = 0;
    for (const auto& entry : fs::directory_iterator(dir))
        if (contains(entry.path().filename().string(), ".tmp-")) ++n;
    return n;
}

struct CliHostileIo : ::testing::Test {
    TempDir dir;
    fs::path cache_dir = dir.path() / "cache";
    std::string source = (dir.path() / "k.cu").string();
    std::map<std::string, std::string> env{{"CUDACORE_CACHE_DIR", cache_dir.string()},
                                           {"CUDACORE_DISABLE_CACHE", ""}};
    // Bounded: a reader that bloats fails an allocation, one that hangs is killed.
    ProcessLimits limits{.address_space_bytes = std::uint64_t{4} << 30, .timeout_seconds = 120};

    void SetUp() override { write_file(source, kKernel); }

    ProcessResult cli(std::vector<std::string> args) {
        args.insert(args.begin(), cli_path().string());
        return run_process(args, env, limits);
    }
    ProcessResult compile_ptx(const std::string& output) {
        return cli({"compile", source, "-o", output, "--arch", "sm_90", "--target", "ptx"});
    }
    std::string path(const char* name) const { return (dir.path() / name).string(); }
};

TEST_F(CliHostileIo, OutputToDevFullFailsNamingIt) {
    const auto result = compile_ptx("/dev/full");
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_TRUE(contains(result.err, "cannot write '/dev/full'")) << result.err;
    EXPECT_TRUE(contains(result.err, "No space left on device")) << result.err;
}

// A full filesystem, stood in for by a file-size limit (writes past it fail with EFBIG): the
// previous output stays whole, a new one is not created, no temporary file is left, and the
// cache's failed store is only a warning.
TEST_F(CliHostileIo, FullFilesystemKeepsThePreviousOutputWhole) {
    const std::string previous = "previous good output\n";
    write_file(path("out.ptx"), previous);
    limits.file_size_bytes = 64;  // less than any PTX or cache entry
    auto result = compile_ptx(path("out.ptx"));
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_TRUE(contains(result.err, "cannot write '" + path("out.ptx") + "'")) << result.err;
    EXPECT_TRUE(contains(result.err, "File too large")) << result.err;
    EXPECT_TRUE(contains(result.err, "warning: compiling without the cache")) << result.err;
    EXPECT_EQ(read_file(path("out.ptx")), previous);

    result = compile_ptx(path("new.ptx"));
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_FALSE(fs::exists(path("new.ptx")));
    EXPECT_EQ(temporaries_in(dir.path()), 0u);
    EXPECT_EQ(temporaries_in(cache_dir), 0u);

    limits.file_size_bytes = 0;  // room again: the same command succeeds
    result = compile_ptx(path("out.ptx"));
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_TRUE(contains(read_file(path("out.ptx")), ".entry fill")) << read_file(path("out.ptx"));
}

TEST_F(CliHostileIo, OutputThroughASymlinkReplacesItsTargetAndKeepsTheLink) {
    write_file(path("real.ptx"), "old");
    fs::create_symlink(path("real.ptx"), path("link.ptx"));
    const auto result = compile_ptx(path("link.ptx"));
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_TRUE(fs::is_symlink(path("link.ptx")));
    EXPECT_TRUE(contains(read_file(path("real.ptx")), ".entry fill"));
}

TEST_F(CliHostileIo, OutputToAFifoNobodyReadsOrToADirectoryFails) {
    ASSERT_EQ(mkfifo(path("fifo").c_str(), 0600), 0);
    auto result = compile_ptx(path("fifo"));
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_TRUE(contains(result.err, "cannot write '" + path("fifo") + "': it is a FIFO that no "
                                     "process is reading")) << result.err;
    fs::create_directory(path("out"));
    result = compile_ptx(path("out"));
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_TRUE(contains(result.err, "cannot write '" + path("out") + "': it is a directory"))
        << result.err;
}

// Each input is refused before it is read, naming the file and why, under a 1 GiB memory limit.
TEST_F(CliHostileIo, InputsThatAreNotRegularFilesOrAreHugeAreRefusedNamingThem) {
    limits.address_space_bytes = std::uint64_t{1} << 30;
    limits.timeout_seconds = 30;
    const std::string sparse = path("sparse.cubin");
    {
        const int fd = ::open(sparse.c_str(), O_WRONLY | O_CREAT, 0600);
        ASSERT_GE(fd, 0);
        ASSERT_EQ(::ftruncate(fd, off_t{3} << 30), 0);  // 3 GiB, no block written
        ::close(fd);
    }
    ASSERT_EQ(mkfifo(path("fifo").c_str(), 0600), 0);
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"/dev/zero", "it is a character device, not a regular file"},
        {dir.path().string(), "it is a directory, not a regular file"},
        {path("fifo"), "it is a FIFO, not a regular file"},
        {sparse, "it is 3221225472 bytes, more than the 1073741824-byte limit"},
        {path("missing"), "no such file"},
    };
    for (const auto& [input, reason] : cases) {
        for (const auto& command :
             std::vector<std::vector<std::string>>{{"inspect", input},
                                                   {"compile", input, "-o", path("o"), "--arch", "sm_90"},
                                                   {"link", input, "-o", path("o"), "--arch", "sm_90"}}) {
            const auto result = cli(command);
            EXPECT_EQ(result.exit_code, 1) << command[0] << " " << input << ": " << result.err;
            EXPECT_TRUE(contains(result.err, "cannot read '" + input + "': " + reason))
                << command[0] << " " << input << ": " << result.err;
        }
    }
    EXPECT_FALSE(fs::exists(path("o")));
}

TEST_F(CliHostileIo, CompileErrorPrintsItsFirstErrorLineOnce) {
    write_file(path("bad.cu"), "__global__ void k() {\n  int x = ;\n}\n");
    const auto result = cli({"compile", path("bad.cu"), "-o", path("bad.ptx"), "--arch", "sm_90",
                             "--target", "ptx"});
    EXPECT_EQ(result.exit_code, 1);
    EXPECT_EQ(count(result.err, "bad.cu(2): error: expected an expression"), 1u) << result.err;
    // Named by its path, as given (as nvcc names it).
    EXPECT_TRUE(contains(result.err, "compiling '" + path("bad.cu") + "' failed (NVRTC):\n"))
        << result.err;
}

TEST_F(CliHostileIo, CacheThatCannotStoreDoesNotFailTheCompile) {
    ASSERT_EQ(compile_ptx(path("1.ptx")).exit_code, 0);
    std::vector<fs::path> entries;
    for (const auto& entry : fs::directory_iterator(cache_dir))
        if (entry.path().extension() == ".ccentry") entries.push_back(entry.path());
    ASSERT_EQ(entries.size(), 2u);  // the code and the list of headers it read
    // A directory where each entry belongs: the cache cannot read or store them.
    for (const auto& entry : entries) {
        fs::remove(entry);
        fs::create_directory(entry);
    }
    const auto result = compile_ptx(path("2.ptx"));
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_TRUE(contains(result.err, "warning: compiling without the cache")) << result.err;
    EXPECT_TRUE(contains(result.err, "Is a directory")) << result.err;
    EXPECT_EQ(read_file(path("2.ptx")), read_file(path("1.ptx")));
    EXPECT_TRUE(fs::is_directory(entries[0]));
    EXPECT_EQ(temporaries_in(cache_dir), 0u);
}

TEST_F(CliHostileIo, ReadOnlyCacheDirectoryDoesNotFailTheCompile) {
    if (geteuid() == 0) GTEST_SKIP() << "running as root, which writes to a mode 0500 directory";
    fs::create_directory(cache_dir);
    ASSERT_EQ(chmod(cache_dir.c_str(), 0500), 0);
    const auto result = compile_ptx(path("1.ptx"));
    chmod(cache_dir.c_str(), 0700);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_TRUE(contains(result.err, "warning: compiling without the cache")) << result.err;
    EXPECT_TRUE(contains(read_file(path("1.ptx")), ".entry fill"));
}

TEST_F(CliHostileIo, PruneRefusesNegativeSizes) {
    for (const char* size : {"-1", "-5"}) {
        const auto result = cli({"cache", "prune", "--max-bytes", size});
        EXPECT_NE(result.exit_code, 0) << size;
        EXPECT_TRUE(contains(result.err, "must be a number of bytes, 0 or more (got '" +
                                             std::string(size) + "')"))
            << result.err;
    }
    EXPECT_FALSE(fs::exists(cache_dir));
}

TEST_F(CliHostileIo, RelativeCacheDirIsRefused) {
    const std::string relative = "relative-cudacore-cache-" + std::to_string(getpid());
    env["CUDACORE_CACHE_DIR"] = relative;
    auto result = cli({"cache", "stats"});
    EXPECT_EQ(result.exit_code, 1);
    EXPECT_TRUE(contains(result.err, "CUDACORE_CACHE_DIR='" + relative + "' is a relative path"))
        << result.err;
    result = compile_ptx(path("1.ptx"));
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_TRUE(contains(result.err, "warning: compiling without the cache")) << result.err;
    EXPECT_FALSE(fs::exists(relative));
}

TEST_F(CliHostileIo, CacheCommandsNeverCreateTheDirectory) {
    const fs::path absent = dir.path() / "new" / "path";
    auto result = cli({"cache", "stats", "--dir", absent.string()});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_TRUE(contains(result.out, "does not exist")) << result.out;
    EXPECT_TRUE(contains(result.out, "entries    0")) << result.out;
    result = cli({"cache", "--dir", absent.string(), "clear"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    result = cli({"cache", "prune", "--max-bytes", "0", "--dir", absent.string()});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_TRUE(contains(result.out, "nothing to remove")) << result.out;
    EXPECT_FALSE(fs::exists(dir.path() / "new"));
}

}  // namespace
