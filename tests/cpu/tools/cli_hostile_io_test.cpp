// The CLI with failing outputs and hostile inputs: a full disk or device never loses or
// truncates an output, inputs that are not regular files (or are huge) are refused naming the
// file, and a cache that cannot store never fails a compile. Each test makes its own inputs and
// runs the CLI under a memory and time limit.
#include "crafted_code.hpp"
#include "test_support.hpp"

#include "cudacore/cache_artefact.hpp"
#include "cudacore/disk_program_cache.hpp"

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

// A device is not a file to replace: refused, naming it, and left as it is.
TEST_F(CliHostileIo, OutputToADeviceIsRefusedNamingIt) {
    const auto result = compile_ptx("/dev/full");
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_TRUE(contains(result.err, "cannot write '/dev/full': it is a character device, not a "
                                     "regular file: refused, and left as it is")) << result.err;
    struct stat info {};
    ASSERT_EQ(::stat("/dev/full", &info), 0);
    EXPECT_TRUE(S_ISCHR(info.st_mode));
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
    // The limit leaves no room for what a compile writes to the temporary directory, so the
    // cache may not have been opened at all.
    if (fs::exists(cache_dir)) EXPECT_EQ(temporaries_in(cache_dir), 0u);

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

TEST_F(CliHostileIo, OutputToAFifoOrADirectoryIsRefusedAndLeftAsItIs) {
    ASSERT_EQ(mkfifo(path("fifo").c_str(), 0600), 0);
    auto result = compile_ptx(path("fifo"));
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_TRUE(contains(result.err, "cannot write '" + path("fifo") + "': it is a FIFO, not a "
                                     "regular file: refused, and left as it is")) << result.err;
    EXPECT_TRUE(fs::is_fifo(path("fifo")));
    fs::create_directory(path("out"));
    result = compile_ptx(path("out"));
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_TRUE(contains(result.err, "cannot write '" + path("out") + "': it is a directory"))
        << result.err;
    EXPECT_TRUE(fs::is_empty(path("out")));
    EXPECT_EQ(temporaries_in(dir.path()), 0u);
    // Standard output named as a path while it is a pipe (as here): refused as the pipe it
    // leads to, not as a file the link's text names.
    result = compile_ptx("/dev/stdout");
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_TRUE(contains(result.err, "cannot write '/dev/stdout': it is a FIFO, not a regular file")) << result.err;
}

// A dangling symlink is written through, as cp and compilers do: its target is created and the
// link is kept. An empty name is refused with a clear message.
TEST_F(CliHostileIo, OutputThroughADanglingSymlinkCreatesItsTarget) {
    fs::create_directory(path("real"));
    fs::create_symlink("real/made.ptx", path("dangling.ptx"));  // relative to the link's folder
    auto result = compile_ptx(path("dangling.ptx"));
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_TRUE(fs::is_symlink(path("dangling.ptx")));
    EXPECT_TRUE(contains(read_file(path("real/made.ptx")), ".entry fill"));

    result = compile_ptx("");
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_TRUE(contains(result.err, "cannot write '': an empty path names no file")) << result.err;
    EXPECT_FALSE(contains(result.err, "rename")) << result.err;
}

// A name as long as the file system allows (NAME_MAX, 255 on most): the temporary name beside
// it is shortened, not made longer than the limit.
TEST_F(CliHostileIo, OutputNamesUpToTheFileSystemLimitWork) {
    const long limit = ::pathconf(dir.path().c_str(), _PC_NAME_MAX);
    ASSERT_GT(limit, 10);
    for (const std::size_t length : {std::size_t{230}, static_cast<std::size_t>(limit)}) {
        const std::string name = std::string(length - 4, 'n') + ".ptx";
        const auto result = compile_ptx((dir.path() / name).string());
        EXPECT_EQ(result.exit_code, 0) << length << ": " << result.err;
        EXPECT_TRUE(contains(read_file(dir.path() / name), ".entry fill")) << length;
    }
    EXPECT_EQ(temporaries_in(dir.path()), 0u);
}

// Item: linking untrusted code. A cubin that crashes nvJitLink (crafted_code.hpp) ends the
// link worker, not the CLI: exit status 1, the input and the signal named, no output.
TEST_F(CliHostileIo, LinkOfAnInputThatCrashesNvJitLinkFailsNamingItAndTheSignal) {
    write_file(path("k.cu"), kKernel);
    ASSERT_EQ(cli({"compile", path("k.cu"), "-o", path("k.cubin"), "--arch", "sm_90", "--rdc",
                   "--no-cache"}).exit_code, 0);
    const std::string crafted = cudacore::test::with_nv_info_symbol_past_the_table(read_file(path("k.cubin")));
    ASSERT_FALSE(crafted.empty());
    write_file(path("crafted.cubin"), crafted);
    const auto result = cli({"link", path("crafted.cubin"), "-o", path("out.cubin"), "--arch", "sm_90"});
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_TRUE(contains(result.err, "nvJitLinkAddData(cubin 'crafted.cubin', ")) << result.err;
    EXPECT_TRUE(contains(result.err, "killed by signal 11 (Segmentation fault)")) << result.err;
    EXPECT_FALSE(fs::exists(path("out.cubin")));
}

// Item: a failed link fails. Two PTX files defining the same kernel: nvJitLink prints
// "Multiple definition" and reports success; the CLI exits 1 and writes nothing.
TEST_F(CliHostileIo, LinkWithTwoDefinitionsOfAKernelFails) {
    ASSERT_EQ(compile_ptx(path("a.ptx")).exit_code, 0);
    fs::copy_file(path("a.ptx"), path("b.ptx"));
    const auto result = cli({"link", path("a.ptx"), path("b.ptx"), "-o", path("ab.cubin"), "--arch", "sm_90"});
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_TRUE(contains(result.err, "Multiple definition of 'fill' in 'b.ptx', first defined in "
                                     "'a.ptx'")) << result.err;
    EXPECT_FALSE(fs::exists(path("ab.cubin")));
}

TEST_F(CliHostileIo, LinkToPtxSaysItNeedsLtoIrInput) {
    ASSERT_EQ(cli({"compile", source, "-o", path("k.cubin"), "--arch", "sm_90", "--rdc"}).exit_code, 0);
    auto result = cli({"link", path("k.cubin"), "-o", path("k.ptx"), "--arch", "sm_90", "--target", "ptx"});
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_TRUE(contains(result.err, "PTX output needs LTO-IR input")) << result.err;
    EXPECT_TRUE(contains(result.err, "'k.cubin' is cubin")) << result.err;
    // LTO-IR input links to PTX, --lto implied.
    ASSERT_EQ(cli({"compile", source, "-o", path("k.ltoir"), "--arch", "sm_90", "--target", "ltoir",
                   "--rdc"}).exit_code, 0);
    result = cli({"link", path("k.ltoir"), "-o", path("k.ptx"), "--arch", "sm_90", "--target", "ptx"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_TRUE(contains(read_file(path("k.ptx")), ".entry fill"));
}

// Item: the temporary folder cannot fail a compile. A missing or relative TMPDIR: the compile
// succeeds without the cache and PCH, with one warning naming the folder and the reason.
TEST_F(CliHostileIo, AnUnusableTmpdirIsOneWarningNotAFailure) {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {path("missing"), "the temporary directory '" + path("missing") + "' (from TMPDIR) does not exist"},
        {"relative/tmp", "the temporary directory 'relative/tmp' (from TMPDIR) is a relative path"},
    };
    for (const auto& [tmpdir, reason] : cases) {
        env["TMPDIR"] = tmpdir;
        const auto result = cli({"compile", source, "-o", path("k.cubin"), "--arch", "sm_90"});
        EXPECT_EQ(result.exit_code, 0) << tmpdir << ": " << result.err;
        EXPECT_EQ(count(result.err, "warning"), 1u) << result.err;
        EXPECT_TRUE(contains(result.err, "cudacore: warning: compiling without the cache and "
                                         "precompiled headers: " + reason)) << result.err;
        EXPECT_TRUE(fs::exists(path("k.cubin")));
        fs::remove(path("k.cubin"));
    }
}

// A TMPDIR with 4 MiB free (a tmpfs mounted in a user and mount namespace, no root needed):
// NVRTC's automatic PCH died there with SIGBUS. Now: no PCH, one warning, a compiled program.
TEST_F(CliHostileIo, ANearlyFullTmpdirIsOneWarningNotACrash) {
    const fs::path small = dir.path() / "small";
    fs::create_directory(small);
    const std::string mount = "mount -t tmpfs -o size=4m tmpfs '" + small.string() + "'";
    if (run_process({"/usr/bin/unshare", "-Urm", "/bin/sh", "-c", mount}).exit_code != 0)
        GTEST_SKIP() << "cannot mount a small tmpfs (unshare -Urm and mount -t tmpfs failed)";
    write_file(path("inc.cu"), "#include <cuda/std/array>\n"
                               "extern \"C\" __global__ void k(int* p) { cuda::std::array<int, 2> a{1, 2}; "
                               "p[threadIdx.x] = a[1]; }\n");
    const std::string command = mount + " && TMPDIR='" + small.string() + "' exec '" +
                                cli_path().string() + "' compile '" + path("inc.cu") + "' -o '" +
                                path("inc.cubin") + "' --arch sm_90";
    const auto result = run_process({"/usr/bin/unshare", "-Urm", "/bin/sh", "-c", command}, env, limits);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(count(result.err, "warning"), 1u) << result.err;
    EXPECT_TRUE(contains(result.err, "precompiled headers: the directory '" + small.string() +
                                     "' has 4 MiB free, less than the ")) << result.err;
    EXPECT_TRUE(fs::exists(path("inc.cubin")));
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

// The files `cache export` and `cache import` read (a --keys manifest, an artefact, a secret
// file) go through the same checked opener: a FIFO never hangs the command (it once waited for a
// writer for ever), and a directory or /dev/zero is refused rather than read as an empty list
// (which exported an empty artefact with exit status 0).
TEST_F(CliHostileIo, CacheFilesThatAreNotRegularFilesOrAreHugeAreRefusedNamingThem) {
    limits.address_space_bytes = std::uint64_t{1} << 30;
    limits.timeout_seconds = 30;
    { cudacore::DiskProgramCache cache(cache_dir); }
    const std::string artefact = path("empty.ccart");
    write_file(artefact, cudacore::CacheArtefact({}, cudacore::CacheArtefact::current_origin()).serialize());
    auto sparse = [&](const char* name, off_t size) {
        const int fd = ::open(path(name).c_str(), O_WRONLY | O_CREAT, 0600);
        EXPECT_GE(fd, 0);
        EXPECT_EQ(::ftruncate(fd, size), 0);  // no block written
        ::close(fd);
        return path(name);
    };
    const std::string sparse_manifest = sparse("keys.txt", off_t{3} << 30);
    const std::string sparse_artefact = sparse("huge.ccart", off_t{9} << 30);
    ASSERT_EQ(mkfifo(path("fifo").c_str(), 0600), 0);
    const std::vector<std::pair<std::string, std::string>> not_files = {
        {"/dev/zero", "it is a character device, not a regular file"},
        {dir.path().string(), "it is a directory, not a regular file"},
        {path("fifo"), "it is a FIFO, not a regular file"},
        {path("missing"), "no such file"},
    };
    auto expect_refused = [&](const std::vector<std::string>& command, const std::string& said) {
        const auto result = cli(command);
        EXPECT_EQ(result.exit_code, 1) << command[1] << " " << command[2] << ": " << result.err;
        EXPECT_TRUE(contains(result.err, said)) << command[1] << ": " << result.err;
        EXPECT_FALSE(contains(result.out, "exported")) << result.out;
    };
    for (const auto& [input, reason] : not_files) {
        SCOPED_TRACE(input);
        expect_refused({"cache", "export", path("out.ccart"), "--keys", input},
                       "cannot read the manifest '" + input + "': " + reason);
        expect_refused({"cache", "import", input}, "cannot read the artefact '" + input + "': " + reason);
        if (input != path("missing")) {
            expect_refused({"cache", "import", artefact, "--secret-file", input}, "not a regular file");
        }
    }
    expect_refused({"cache", "export", path("out.ccart"), "--keys", sparse_manifest},
                   "cannot read the manifest '" + sparse_manifest +
                       "': it is 3221225472 bytes, more than the 268435456-byte limit for the manifest");
    // Refused from its first bytes, without being read.
    expect_refused({"cache", "import", sparse_artefact}, "not a cache artefact (9663676416 bytes; the magic number");
    EXPECT_FALSE(fs::exists(path("out.ccart")));
}

// An import refused, for its artefact or for the folder it would go to, leaves nothing made.
TEST_F(CliHostileIo, ARefusedImportLeavesNoFolderBehind) {
    const std::string artefact = path("empty.ccart");
    write_file(artefact, cudacore::CacheArtefact({}, cudacore::CacheArtefact::current_origin()).serialize());
    write_file(path("damaged.ccart"), read_file(artefact).substr(0, 50));
    const fs::path fresh = dir.path() / "new" / "deeper" / "cache";
    auto result = cli({"cache", "import", path("damaged.ccart"), "--dir", fresh.string()});
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_TRUE(contains(result.err, "truncated")) << result.err;
    EXPECT_FALSE(fs::exists(dir.path() / "new"));
    // A folder others can write to above the cache: refused, and the folders made for it go.
    fs::create_directories(dir.path() / "open");
    fs::permissions(dir.path() / "open", fs::perms::all, fs::perm_options::replace);
    const fs::path exposed = dir.path() / "open" / "sub" / "cache";
    result = cli({"cache", "import", artefact, "--dir", exposed.string()});
    EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
    EXPECT_TRUE(contains(result.err, "refusing")) << result.err;
    EXPECT_FALSE(fs::exists(dir.path() / "open" / "sub"));
    // Accepted: made, and said to be unsigned.
    result = cli({"cache", "import", artefact, "--dir", fresh.string()});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_TRUE(contains(result.out, "unsigned")) << result.out;
    EXPECT_TRUE(fs::exists(fresh / "CACHEDIR.TAG"));
}

// What a command prints must reach its output: to a full device or a closed descriptor the
// command fails, saying so, instead of ending with 0 and nothing written (the lowered names a
// script reads, the cache's figures).
TEST_F(CliHostileIo, AnOutputThatCannotBeWrittenFailsTheCommand) {
    const std::string cubin = path("k.cubin");
    ASSERT_EQ(cli({"compile", source, "-o", cubin, "--arch", "sm_90"}).exit_code, 0);
    for (const std::string redirect : {" >/dev/full", " >&-"}) {
        for (const std::string& command :
             std::vector<std::string>{"inspect '" + cubin + "'", "cache stats", "--version", "--help", "compile --help"}) {
            const auto result = run_process({"/bin/sh", "-c", "'" + cli_path().string() + "' " + command + redirect},
                                            env, limits);
            EXPECT_EQ(result.exit_code, 1) << command << redirect << ": " << result.err;
            EXPECT_TRUE(contains(result.err, "writing to the standard output failed")) << command << redirect << ": "
                                                                                       << result.err;
        }
    }
    EXPECT_EQ(cli({"inspect", cubin}).exit_code, 0);
    // A closed standard output is held by /dev/null, read-only: no file the command opens (the PCH
    // folder, its lock, a cache entry) takes its number, so -o /dev/stdout is no folder of the
    // command's own, and what the command prints goes into none of its files.
    const auto to_closed = run_process(
        {"/bin/sh", "-c", "'" + cli_path().string() + "' compile '" + source + "' -o /dev/stdout --arch sm_90 >&-"},
        env, limits);
    EXPECT_EQ(to_closed.exit_code, 1) << to_closed.err;
    EXPECT_TRUE(contains(to_closed.err, "/dev/stdout")) << to_closed.err;
    EXPECT_FALSE(contains(to_closed.err, "directory")) << to_closed.err;
}

TEST_F(CliHostileIo, CompileErrorPrintsItsFirstErrorLineOnce) {
    write_file(path("bad.cu"), "__global__ void k() {\n  int x = ;\n}\n");
    const auto result = cli({"compile", path("bad.cu"), "-o", path("bad.ptx"), "--arch", "sm_90",
                             "--target", "ptx"});
    EXPECT_EQ(result.exit_code, 1);
    EXPECT_EQ(count(result.err, "bad.cu(2): error: expected an expression"), 1u) << result.err;
    // Named by its path, as given (as nvcc names it).
    EXPECT_TRUE(contains(result.err, "compiling '" + path("bad.cu") + "' failed (NVRTC; nvrtcCompileProgram: NVRTC_ERROR_COMPILATION):\n"))
        << result.err;
}

TEST_F(CliHostileIo, CacheThatCannotStoreDoesNotFailTheCompile) {
    ASSERT_EQ(compile_ptx(path("1.ptx")).exit_code, 0);
    std::vector<fs::path> entries;
    for (const auto& entry : fs::recursive_directory_iterator(cache_dir))
        if (entry.path().extension() == ".ccentry") entries.push_back(entry.path());
    ASSERT_EQ(entries.size(), 1u);  // the code, under the key of what NVRTC was given
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
