// cudacore_add_header_bundle (tests/CMakeLists.txt makes two bundles for this test during the
// build and links them in) and embedded_header_bundle(), which returns them.
#include "temporary_cache_folder.hpp"
#include "test_support.hpp"

#include "cudacore/embedded_header_bundle.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/program.hpp"

namespace {

using namespace cudacore;

// Header bundles are written out as folders under the cache folder: a temporary one for this
// program, never the user's.
[[maybe_unused]] ::testing::Environment* const cache_folder_environment =
    ::testing::AddGlobalTestEnvironment(new cudacore::test::TemporaryCacheFolderEnvironment);

TEST(EmbeddedHeaderBundle, BuiltInBundlesAreThereByName) {
    EXPECT_EQ(embedded_header_bundle_names(), (std::vector<std::string>{"test_fp16", "test_values"}));
    const HeaderBundle values = embedded_header_bundle("test_values");
    EXPECT_EQ(values.name(), "test_values");
    ASSERT_EQ(values.size(), 2u);
    ASSERT_NE(values.find("lib/value.h"), nullptr);
    EXPECT_NE(values.find("lib/value.h")->find("#include \"lib/detail.h\""), std::string::npos);
    // Read once and kept: copies share the headers.
    EXPECT_EQ(&embedded_header_bundle("test_values").headers(), &values.headers());
    EXPECT_NE(embedded_header_bundle("test_fp16").find("cuda_fp16.h"), nullptr);
    test::expect_invalid([] { embedded_header_bundle("absent"); },
                         {"no bundle 'absent'", "'test_fp16', 'test_values'",
                          "cudacore_add_header_bundle"});
}

TEST(EmbeddedHeaderBundle, CompilesFromTheBuiltInHeaders) {
    ProgramOptions options;
    options.name = "embedded";
    options.arch = "sm_90";
    options.header_bundles = {embedded_header_bundle("test_values"), embedded_header_bundle("test_fp16")};
    Program program(R"(
#include <lib/value.h>
#include <cuda_fp16.h>
extern "C" __global__ void k(int* out, __half* h) { *out = EMBEDDED_VALUE; *h = __float2half(1.0f); }
)",
                    SourceType::cxx, options);
    const std::string ptx(program.compile(CodeType::ptx).code());
    EXPECT_NE(ptx.find("6060601"), std::string::npos) << ptx;
}

}  // namespace
