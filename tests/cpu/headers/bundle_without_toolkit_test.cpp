// A program using <cuda/std/cmath>, cuda_fp16.h and cooperative_groups.h compiles from a header
// bundle while the toolkit's include folders are invisible to the process: a helper runs in a
// user and mount namespace (unshare -rm) with an empty tmpfs mounted over each folder, so no
// header file can be read from them. Its cubin equals the one compiled from the folders. The
// folder NVRTC came from is hidden too, after being bound to a private folder that is on no
// search path: the helper takes NVRTC from there (CUDACORE_NVRTC_PATH), as an application takes
// it from NVIDIA's wheel, and NVRTC still finds its builtins library.
#include "temporary_cache_folder.hpp"
#include "test_support.hpp"

#include "cudacore/header_bundle.hpp"
#include "cudacore/program_options.hpp"
#include "cudacore/program.hpp"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <filesystem>

namespace {

using namespace cudacore;
using cudacore::test::helper_path;
using cudacore::test::run_process;
using cudacore::test::TempDir;

// Header bundles are written out as folders under the cache folder: a temporary one for this
// program, never the user's.
[[maybe_unused]] ::testing::Environment* const cache_folder_environment =
    ::testing::AddGlobalTestEnvironment(new cudacore::test::TemporaryCacheFolderEnvironment);

using cudacore::test::write_file;

constexpr const char* kSource = R"(
#include <cuda/std/cmath>
#include <cuda_fp16.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void k(float* out, const __half* in) {
    cg::thread_block block = cg::this_thread_block();
    const unsigned i = block.thread_rank();
    out[i] = cuda::std::sqrt(__half2float(in[i])) + cuda::std::fabs(out[i]);
    block.sync();
}
)";

constexpr const char* nvrtc_name = "libnvrtc.so.13";

// The real folder of the NVRTC this process loaded (symbolic links resolved), or empty.
std::filesystem::path loaded_nvrtc_folder() {
    void* handle = ::dlopen(nvrtc_name, RTLD_NOW | RTLD_NOLOAD);
    if (handle == nullptr) return {};
    link_map* map = nullptr;
    const int status = ::dlinfo(handle, RTLD_DI_LINKMAP, &map);
    ::dlclose(handle);
    if (status != 0 || map == nullptr || map->l_name == nullptr) return {};
    std::error_code error;
    const auto path = std::filesystem::canonical(map->l_name, error);
    return error ? std::filesystem::path() : path.parent_path();
}

// The folders to hide: the toolkit's, less those inside another (hidden with it).
std::vector<std::string> outermost(std::vector<std::string> folders) {
    std::sort(folders.begin(), folders.end());
    std::vector<std::string> out;
    for (const auto& folder : folders)
        if (out.empty() || !folder.starts_with(out.back() + "/")) out.push_back(folder);
    return out;
}

TEST(BundleWithoutToolkit, CompilesWithTheToolkitFoldersHidden) {
    const std::vector<std::string> toolkit = toolkit_include_dirs();
    if (toolkit.empty()) GTEST_SKIP() << "no CUDA toolkit include folder to bundle from";
    std::string unshare;
    for (const char* candidate : {"/usr/bin/unshare", "/bin/unshare"})
        if (std::filesystem::exists(candidate)) unshare = candidate;
    if (unshare.empty()) GTEST_SKIP() << "no unshare (util-linux) to hide the toolkit's folders";
    const auto probe = run_process({unshare, "-rm", "/bin/true"});
    if (probe.exit_code != 0) {
        GTEST_SKIP() << "cannot make a user and mount namespace (unshare -rm exited "
                     << probe.exit_code << ": " << probe.err << ")";
    }

    TempDir dir;
    const std::vector<std::filesystem::path> folders(toolkit.begin(), toolkit.end());
    const HeaderBundle bundle = HeaderBundle::from_include_folders(
        {"<cuda/std/cmath>", "cuda_fp16.h", "cooperative_groups.h"}, folders, "toolkit");
    bundle.save(dir.path() / "toolkit.ccbundle");
    ProgramOptions options;
    options.name = "hidden_toolkit_program";
    options.arch = "sm_90";
    options.pch = false;
    const ObjectCode reference = Program(kSource, SourceType::cxx, options).compile(CodeType::cubin);
    write_file(dir.path() / "reference.cubin", std::string(reference.code()));
    write_file(dir.path() / "kernel.cu", kSource);

    const std::filesystem::path nvrtc_folder = loaded_nvrtc_folder();
    ASSERT_FALSE(nvrtc_folder.empty()) << "NVRTC is not loaded after a compile";
    const std::filesystem::path private_nvrtc = dir.path() / "nvrtc";
    std::filesystem::create_directories(private_nvrtc);
    std::vector<std::string> argv{
        unshare, "-rm", "/bin/sh", "-c",
        "helper=$1; nvrtc=$2; private=$3; shift 3; "
        "mount --bind \"$nvrtc\" \"$private\" || exit 90; "
        "mount -t tmpfs cudacore-hidden \"$nvrtc\" || exit 90; "
        "for d in \"$@\"; do mount -t tmpfs cudacore-hidden \"$d\" || exit 90; done; "
        "exec \"$helper\" \"$BUNDLE\" \"$REFERENCE\" \"$SOURCE\" \"$nvrtc\" \"$@\"",
        "sh", helper_path("bundle_compile").string(), nvrtc_folder.string(), private_nvrtc.string()};
    for (const auto& folder : outermost(toolkit)) argv.push_back(folder);
    // LD_LIBRARY_PATH passes through: a build that moved to another machine finds libcudacore by
    // it (NVRTC still comes from CUDACORE_NVRTC_PATH alone).
    const auto result = run_process(
        argv, {{"CUDACORE_NVRTC_PATH", (private_nvrtc / nvrtc_name).string()},
               {"BUNDLE", (dir.path() / "toolkit.ccbundle").string()},
               {"REFERENCE", (dir.path() / "reference.cubin").string()},
               {"SOURCE", (dir.path() / "kernel.cu").string()}},
        {.timeout_seconds = 300});
    if (result.exit_code == 90) GTEST_SKIP() << "cannot mount a tmpfs in the namespace: " << result.err;
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_NE(result.out.find("without the bundle: "), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("the program needs the header 'cuda/std/cmath' and no CUDA toolkit "
                              "include folder was found"),
              std::string::npos)
        << result.out;
    EXPECT_NE(result.out.find("as the toolkit's"), std::string::npos) << result.out;
}

}  // namespace
