// An ObjectCode serialized by one process is loaded and launched by another, with the right
// result: through a saved file, and through the disk program cache.
#include "test_support.hpp"

#include "cudacore/object_code.hpp"

namespace {

using cudacore::test::helper_path;
using cudacore::test::run_process;
using cudacore::test::TempDir;

TEST(SerializedLaunchGpu, SavedByOneProcessLaunchedByAnother) {
    CUDACORE_REQUIRE_GPU();
    TempDir dir;
    const auto path = (dir.path() / "scale.ccobj").string();
    const auto saved = run_process({helper_path("serialized_launch").string(), "save", path});
    ASSERT_EQ(saved.exit_code, 0) << saved.out << saved.err;
    // What was shipped is a plain serialized value: cubin, name, symbol map.
    const auto code = cudacore::ObjectCode::from_saved(path);
    EXPECT_EQ(code.code_type(), cudacore::CodeType::cubin);
    EXPECT_EQ(code.symbol_map().count("scale<float>"), 1u);
    EXPECT_FALSE(code.is_loaded());

    const auto launched = run_process({helper_path("serialized_launch").string(), "launch", path});
    EXPECT_EQ(launched.exit_code, 0) << launched.out << launched.err;
    EXPECT_NE(launched.out.find("ok 4096 values"), std::string::npos) << launched.out;
}

TEST(SerializedLaunchGpu, CachedByOneProcessLaunchedByAnother) {
    CUDACORE_REQUIRE_GPU();
    TempDir dir;
    const auto cache_dir = (dir.path() / "cache").string();
    const auto put = run_process({helper_path("serialized_launch").string(), "cache-put", cache_dir});
    ASSERT_EQ(put.exit_code, 0) << put.out << put.err;
    const auto launched =
        run_process({helper_path("serialized_launch").string(), "cache-launch", cache_dir});
    EXPECT_EQ(launched.exit_code, 0) << launched.out << launched.err;
    EXPECT_NE(launched.out.find("ok 4096 values"), std::string::npos) << launched.out;
}

}  // namespace
