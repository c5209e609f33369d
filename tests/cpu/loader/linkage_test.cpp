// Nothing links against the driver, NVRTC, nvJitLink or OpenGL's libraries: every binary starts
// without a GPU and without a GL installation.
#include "test_support.hpp"

#include <filesystem>

namespace {

using cudacore::test::run_process;

void expect_no_cuda_libraries(const std::filesystem::path& binary) {
    ASSERT_TRUE(std::filesystem::exists(binary)) << binary;
    auto result = run_process({"/usr/bin/ldd", binary.string()});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.out.find("libc.so"), std::string::npos) << result.out;  // ldd really ran
    for (const char* library : {"libcuda.so", "libnvrtc", "libnvJitLink", "libcudart", "libEGL",
                                "libGL.so", "libGLX", "libOpenGL"})
        EXPECT_EQ(result.out.find(library), std::string::npos) << binary << " links " << library
                                                               << ":\n" << result.out;
}

TEST(Linkage, LibraryLinksNoCudaLibrary) {
    auto dir = cudacore::test::executable_dir().parent_path();
    std::filesystem::path library;
    for (const auto& entry : std::filesystem::directory_iterator(dir))
        if (entry.path().filename().string().rfind("libcudacore.so", 0) == 0) library = entry.path();
    ASSERT_FALSE(library.empty()) << "libcudacore.so not found in " << dir;
    expect_no_cuda_libraries(library);
}

TEST(Linkage, CliLinksNoCudaLibrary) { expect_no_cuda_libraries(cudacore::test::cli_path()); }

}  // namespace
