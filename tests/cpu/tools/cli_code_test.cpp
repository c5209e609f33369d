// The compile, link and inspect commands of the cudacore CLI, driven as a user would.
#include "crafted_code.hpp"
#include "test_support.hpp"

#include "cudacore/code_inspection.hpp"
#include "cudacore/system.hpp"

#include <filesystem>
#include <map>

namespace {

using cudacore::CodeType;
using cudacore::inspect_code;
using cudacore::test::cli_path;
using cudacore::test::read_file;
using cudacore::test::run_process;
using cudacore::test::TempDir;
using cudacore::test::write_file;

constexpr const char* kKernels = R"(
template <typename T>
__global__ void scale(T* data, T factor) { data[threadIdx.x] *= factor; }
extern "C" __global__ void fill(int* data) { data[threadIdx.x] = WIDTH; }
)";

std::string path_of(const TempDir& dir, const char* name) { return (dir.path() / name).string(); }

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

TEST(CliCode, CompileToCubinPrintsLoweredNames) {
    TempDir dir;
    write_file(dir.path() / "k.cu", kKernels);
    auto result = run_process({cli_path().string(), "compile", path_of(dir, "k.cu"), "-o",
                               path_of(dir, "k.cubin"), "--arch", "sm_90", "-D", "WIDTH=4",
                               "--name-expr", "scale<float>", "--std", "c++17"});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_TRUE(contains(result.out, "scale<float> -> _Z5scaleIfEvPT_S0_")) << result.out;
    const auto info = inspect_code(read_file(dir.path() / "k.cubin"));
    EXPECT_EQ(info.type, CodeType::cubin);
    EXPECT_EQ(info.arch, "sm_90");
    EXPECT_EQ(info.kernels, (std::vector<std::string>{"_Z5scaleIfEvPT_S0_", "fill"}));
}

TEST(CliCode, ArchListCompilesOneFatbinAndInspectListsItsImages) {
    TempDir dir;
    write_file(dir.path() / "k.cu", kKernels);
    auto result = run_process({cli_path().string(), "compile", path_of(dir, "k.cu"), "-o",
                               path_of(dir, "k.fatbin"), "--arch", "sm_80,sm_90,compute_90", "-D",
                               "WIDTH=4", "--name-expr", "scale<float>", "--no-cache"});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_TRUE(contains(result.out, "scale<float> -> _Z5scaleIfEvPT_S0_")) << result.out;
    EXPECT_TRUE(contains(result.err, "fatbin of 3 images")) << result.err;
    const auto info = inspect_code(read_file(dir.path() / "k.fatbin"));
    EXPECT_EQ(info.type, CodeType::fatbin);
    ASSERT_EQ(info.entries.size(), 3u);
    EXPECT_EQ(info.entries[0].kind + " " + info.entries[0].arch, "elf sm_80");
    EXPECT_EQ(info.entries[1].kind + " " + info.entries[1].arch, "elf sm_90");
    EXPECT_EQ(info.entries[2].kind + " " + info.entries[2].arch, "ptx compute_90");

    auto inspected = run_process({cli_path().string(), "inspect", path_of(dir, "k.fatbin")});
    ASSERT_EQ(inspected.exit_code, 0) << inspected.out << inspected.err;
    EXPECT_TRUE(contains(inspected.out, "type     fatbin")) << inspected.out;
    EXPECT_TRUE(contains(inspected.out, "entries  3")) << inspected.out;
    EXPECT_TRUE(contains(inspected.out, "  elf    sm_80      ")) << inspected.out;
    EXPECT_TRUE(contains(inspected.out, "  elf    sm_90      ")) << inspected.out;
    EXPECT_TRUE(contains(inspected.out, "  ptx    compute_90 ")) << inspected.out;
    EXPECT_TRUE(contains(inspected.out, "fill")) << inspected.out;

    // Serialized, it keeps its name and symbols; compiled again through the cache, the same bytes.
    TempDir cache;
    const std::map<std::string, std::string> env{{"CUDACORE_CACHE_DIR", cache.path().string()}};
    const std::vector<std::string> serialize{cli_path().string(), "compile", path_of(dir, "k.cu"), "-o",
                                             path_of(dir, "k.ccobj"), "--arch", "sm_80,compute_80",
                                             "-DWIDTH=4", "--serialize", "--name-expr", "scale<float>"};
    ASSERT_EQ(run_process(serialize, env).exit_code, 0);
    const std::string first = read_file(dir.path() / "k.ccobj");
    auto again = run_process(serialize, env);
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(read_file(dir.path() / "k.ccobj"), first);
    auto serialized = run_process({cli_path().string(), "inspect", path_of(dir, "k.ccobj")});
    EXPECT_TRUE(contains(serialized.out, "scale<float> -> _Z5scaleIfEvPT_S0_")) << serialized.out;
    EXPECT_TRUE(contains(serialized.out, "entries  2")) << serialized.out;
}

TEST(CliCode, BadArchListsAreClearErrors) {
    TempDir dir;
    write_file(dir.path() / "k.cu", kKernels);
    const auto compile = [&](const std::string& arch, const std::string& target) {
        std::vector<std::string> argv{cli_path().string(), "compile", path_of(dir, "k.cu"), "-o",
                                      path_of(dir, "k.fatbin"), "--arch", arch, "-DWIDTH=1", "--no-cache"};
        if (!target.empty()) argv.insert(argv.end(), {"--target", target});
        return run_process(argv);
    };
    auto bad = compile("sm_80,gfx90a", "");
    EXPECT_EQ(bad.exit_code, 1);
    EXPECT_TRUE(contains(bad.err, "fatbin target 'gfx90a'")) << bad.err;
    auto twice = compile("sm_80,sm_80", "");
    EXPECT_EQ(twice.exit_code, 1);
    EXPECT_TRUE(contains(twice.err, "'sm_80' is named twice")) << twice.err;
    auto empty = compile("sm_80,", "");
    EXPECT_EQ(empty.exit_code, 1);
    EXPECT_TRUE(contains(empty.err, "fatbin target ''")) << empty.err;
    auto ptx = compile("sm_80,sm_90", "ptx");
    EXPECT_EQ(ptx.exit_code, 1);
    EXPECT_TRUE(contains(ptx.err, "makes a fatbin, not ptx")) << ptx.err;
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "k.fatbin"));
    // One target with --target fatbin: a fatbin of one image.
    ASSERT_EQ(compile("compute_90", "fatbin").exit_code, 0);
    EXPECT_EQ(inspect_code(read_file(dir.path() / "k.fatbin")).entries.size(), 1u);
}

TEST(CliCode, CubinIsReadableByCuobjdump) {
    const std::filesystem::path cuobjdump = "/usr/local/cuda/bin/cuobjdump";
    if (!std::filesystem::exists(cuobjdump)) GTEST_SKIP() << "no " << cuobjdump;
    TempDir dir;
    write_file(dir.path() / "k.cu", kKernels);
    ASSERT_EQ(run_process({cli_path().string(), "compile", path_of(dir, "k.cu"), "-o",
                           path_of(dir, "k.cubin"), "--arch", "sm_90", "-DWIDTH=1"})
                  .exit_code,
              0);
    auto dump = run_process({cuobjdump.string(), "-elf", path_of(dir, "k.cubin")});
    EXPECT_EQ(dump.exit_code, 0) << dump.err;
    EXPECT_TRUE(contains(dump.out, "fill")) << dump.out;
    EXPECT_TRUE(contains(dump.out, "sm_90")) << dump.out;
}

TEST(CliCode, CompileToPtxThenInspect) {
    TempDir dir;
    write_file(dir.path() / "k.cu", kKernels);
    ASSERT_EQ(run_process({cli_path().string(), "compile", path_of(dir, "k.cu"), "-o",
                           path_of(dir, "k.ptx"), "--arch", "sm_86", "--target", "ptx",
                           "-DWIDTH=2", "--name-expr", "scale<double>"})
                  .exit_code,
              0);
    auto result = run_process({cli_path().string(), "inspect", path_of(dir, "k.ptx")});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_TRUE(contains(result.out, "type     ptx")) << result.out;
    EXPECT_TRUE(contains(result.out, "arch     sm_86")) << result.out;
    EXPECT_TRUE(contains(result.out, "  fill\n")) << result.out;
    EXPECT_TRUE(contains(result.out, "  _Z5scaleIdEvPT_S0_\n")) << result.out;
    EXPECT_TRUE(contains(result.out, "kernels  2")) << result.out;
}

// --nvrtc-flag gives NVRTC a flag the CLI has no option for, as it is; the cache keys it (the
// compile without it, cached first, is not what the compile with it gets).
TEST(CliCode, NvrtcFlagsReachTheCompilerAndTheKey) {
    TempDir dir;
    write_file(dir.path() / "d.cu", "extern \"C\" __global__ void d(float* x) { x[0] = x[1] / x[2]; }\n");
    auto compile = [&](const char* output, std::vector<std::string> extra) {
        std::vector<std::string> command{cli_path().string(), "compile", path_of(dir, "d.cu"), "-o",
                                         path_of(dir, output), "--arch", "sm_90", "--target", "ptx"};
        command.insert(command.end(), extra.begin(), extra.end());
        return run_process(command);
    };
    auto plain = compile("plain.ptx", {});
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    EXPECT_TRUE(contains(read_file(dir.path() / "plain.ptx"), "div.rn.f32"));
    for (int round = 0; round < 2; ++round) {  // the second from the cache
        auto fast = compile("fast.ptx", {"--nvrtc-flag=--use_fast_math", "--nvrtc-flag=-maxrregcount=32"});
        ASSERT_EQ(fast.exit_code, 0) << fast.err;
        const std::string ptx = read_file(dir.path() / "fast.ptx");
        EXPECT_FALSE(contains(ptx, "div.rn.f32")) << ptx;
        EXPECT_TRUE(contains(ptx, ".ftz.f32")) << ptx;
    }
    auto unknown = compile("unknown.ptx", {"--nvrtc-flag=--no-such-flag"});
    EXPECT_EQ(unknown.exit_code, 1);
    EXPECT_TRUE(contains(unknown.err, "--no-such-flag")) << unknown.err;
}

TEST(CliCode, FailedCompileExitsNonZeroWithTheLog) {
    TempDir dir;
    write_file(dir.path() / "bad.cu", "__global__ void k() {\n  int x = ;\n}\n");
    auto result = run_process({cli_path().string(), "compile", path_of(dir, "bad.cu"), "-o",
                               path_of(dir, "bad.cubin"), "--arch", "sm_90"});
    EXPECT_NE(result.exit_code, 0);
    EXPECT_TRUE(contains(result.err, "bad.cu(2): error")) << result.err;
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "bad.cubin"));
}

TEST(CliCode, MissingSourceIsAClearError) {
    TempDir dir;
    auto result = run_process({cli_path().string(), "compile", path_of(dir, "missing.cu"), "-o",
                               path_of(dir, "out.cubin"), "--arch", "sm_90"});
    EXPECT_NE(result.exit_code, 0);
    EXPECT_TRUE(contains(result.err, "missing.cu")) << result.err;
    EXPECT_TRUE(contains(result.err, "no such file")) << result.err;
}

TEST(CliCode, CompileLtoIrUnitsAndLinkThem) {
    TempDir dir;
    write_file(dir.path() / "a.cu",
               "extern __device__ int twice(int);\n"
               "extern \"C\" __global__ void kernel_a(int* p) { *p = twice(*p); }\n");
    write_file(dir.path() / "b.cu",
               "__device__ int twice(int x) { return 2 * x; }\n"
               "extern \"C\" __global__ void kernel_b(int* p) { *p = 7; }\n");
    for (const char* unit : {"a", "b"}) {
        auto result = run_process({cli_path().string(), "compile",
                                   path_of(dir, (std::string(unit) + ".cu").c_str()), "-o",
                                   path_of(dir, (std::string(unit) + ".ltoir").c_str()), "--arch",
                                   "sm_90", "--target", "ltoir", "--rdc"});
        ASSERT_EQ(result.exit_code, 0) << result.err;
    }
    auto inspected = run_process({cli_path().string(), "inspect", path_of(dir, "a.ltoir")});
    EXPECT_TRUE(contains(inspected.out, "type     ltoir")) << inspected.out << inspected.err;

    auto link = run_process({cli_path().string(), "link", path_of(dir, "a.ltoir"),
                             path_of(dir, "b.ltoir"), "-o", path_of(dir, "ab.cubin"), "--arch",
                             "sm_90", "--lto"});
    ASSERT_EQ(link.exit_code, 0) << link.err;
    const auto info = inspect_code(read_file(dir.path() / "ab.cubin"));
    EXPECT_EQ(info.kernels, (std::vector<std::string>{"kernel_a", "kernel_b"}));

    // Without b, twice() is unresolved: the link fails with the linker's log.
    auto failed = run_process({cli_path().string(), "link", path_of(dir, "a.ltoir"), "-o",
                               path_of(dir, "a.cubin"), "--arch", "sm_90", "--lto"});
    EXPECT_NE(failed.exit_code, 0);
    EXPECT_TRUE(contains(failed.err, "twice")) << failed.err;
}

TEST(CliCode, InspectRefusesGarbage) {
    TempDir dir;
    write_file(dir.path() / "junk.bin", "definitely not GPU code");
    auto result = run_process({cli_path().string(), "inspect", path_of(dir, "junk.bin")});
    EXPECT_NE(result.exit_code, 0);
    EXPECT_TRUE(contains(result.err, "unrecognised code")) << result.err;
}

TEST(CliCode, PtxWithoutNvJitLinkUsesTheDriverOrSaysWhatToSet) {
    TempDir dir;
    write_file(dir.path() / "k.cu", kKernels);
    ASSERT_EQ(run_process({cli_path().string(), "compile", path_of(dir, "k.cu"), "-o",
                           path_of(dir, "k.ptx"), "--arch", "sm_90", "--target", "ptx", "-DWIDTH=1"})
                  .exit_code,
              0);
    auto result = run_process({cli_path().string(), "compile", path_of(dir, "k.ptx"), "-o",
                               path_of(dir, "k.cubin"), "--arch", "sm_90"},
                              {{"CUDACORE_NVJITLINK_PATH", "/nonexistent/libnvJitLink.so.13"}});
    if (!cudacore::system::driver_available()) {
        EXPECT_NE(result.exit_code, 0);
        EXPECT_TRUE(contains(result.err, "CUDACORE_NVJITLINK_PATH")) << result.err;
    } else if (cudacore::test::gpu_unavailable_reason().empty()) {
        // The driver's linker takes over (the GPU test checks the result in detail).
        EXPECT_EQ(result.exit_code, 0) << result.err;
    }
}

// Files that are not what they claim: an ELF magic then 64 KiB of random bytes (once a crash
// inside nvJitLink) and the first 100 bytes of a real cubin (once linked into an empty cubin,
// exit 0). Both are a clear error and exit 1 from link (no output written) and from inspect.
TEST(CliCode, LinkAndInspectRefuseFakeAndTruncatedCubins) {
    TempDir dir;
    write_file(dir.path() / "k.cu", kKernels);
    ASSERT_EQ(run_process({cli_path().string(), "compile", path_of(dir, "k.cu"), "-o",
                           path_of(dir, "k.cubin"), "--arch", "sm_90", "-DWIDTH=1"})
                  .exit_code,
              0);
    write_file(dir.path() / "trunc.cubin", read_file(dir.path() / "k.cubin").substr(0, 100));
    write_file(dir.path() / "fake.cubin", cudacore::test::fake_elf());

    for (const auto& [file, type] : {std::pair{"fake.cubin", "object"}, std::pair{"trunc.cubin", "cubin"}}) {
        const std::string malformed = std::string("malformed ") + type + " '" + file + "'";
        auto link = run_process({cli_path().string(), "link", path_of(dir, file), "-o",
                                 path_of(dir, "out.cubin"), "--arch", "sm_90"});
        EXPECT_EQ(link.exit_code, 1) << link.out << link.err;
        EXPECT_TRUE(contains(link.err, malformed)) << link.err;
        EXPECT_FALSE(std::filesystem::exists(dir.path() / "out.cubin")) << file;

        auto inspect = run_process({cli_path().string(), "inspect", path_of(dir, file)});
        EXPECT_EQ(inspect.exit_code, 1) << inspect.out << inspect.err;
        EXPECT_TRUE(contains(inspect.err, std::string("malformed ") + type)) << inspect.err;
    }
}

}  // namespace
