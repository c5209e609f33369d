// ObjectCode loading without a GPU: values need no driver, failures are clear and repeated, and
// code that must be linked first is refused before any driver call. Also the compile-time side of
// launch(): argument conversion and TypedKernel's type checks.
#include "crafted_code.hpp"
#include "test_support.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/object_code.hpp"
#include "runtime/library_box.hpp"
#include "runtime/driver_launch_config.hpp"

#include <sstream>
#include <type_traits>

namespace {

using cudacore::CodeType;
using cudacore::ObjectCode;
using cudacore::test::helper_path;
using cudacore::test::run_process;

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

std::string after(const std::string& line, const std::string& prefix) {
    return line.rfind(prefix, 0) == 0 ? line.substr(prefix.size()) : "<" + line + ">";
}

TEST(ObjectCodeLoading, CreatedAndCopiedWithoutDriverThenSameErrorOnEveryUse) {
    auto result = run_process({helper_path("object_code_loading_probe").string(), "no-driver"},
                              {{"CUDACORE_LIBCUDA_PATH", "/nonexistent/libcuda-for-loading.so.1"}});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    auto lines = lines_of(result.out);
    ASSERT_EQ(lines.size(), 6u) << result.out;
    EXPECT_EQ(lines[0], "create: ok");

    const std::string first = after(lines[1], "get_kernel 1: NoDriverError: ");
    const std::string second = after(lines[2], "get_kernel 2: NoDriverError: ");
    const std::string third = after(lines[3], "load: NoDriverError: ");
    EXPECT_EQ(first, second);  // the same error, not a retry with a new one
    EXPECT_EQ(first, third);
    // What was searched, how to fix it, and what was being loaded.
    EXPECT_NE(first.find("/nonexistent/libcuda-for-loading.so.1"), std::string::npos) << first;
    EXPECT_NE(first.find("CUDACORE_LIBCUDA_PATH"), std::string::npos) << first;
    const std::string probe_code =
        "cubin 'probe_code' (" + std::to_string(cudacore::test::minimal_cubin().size()) + " bytes)";
    EXPECT_NE(first.find(probe_code), std::string::npos) << first;
    EXPECT_NE(first.find("kernel 'saxpy'"), std::string::npos) << first;
    EXPECT_EQ(lines[4], "is_loaded: false");
    EXPECT_EQ(lines[5], "library loads: 0");
}

// Sixteen threads take their first kernel of one ObjectCode at once: one load is attempted, its
// failure kept, and every thread gets that same failure (the helper's lazy load, under
// ThreadSanitizer too: scripts/tsan.sh).
TEST(ObjectCodeLoading, ThreadsLookingUpAtOnceShareOneOutcome) {
    auto result = run_process({helper_path("object_code_loading_probe").string(), "threads"},
                              {{"CUDACORE_LIBCUDA_PATH", "/nonexistent/libcuda-for-loading.so.1"}});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    const auto lines = lines_of(result.out);
    ASSERT_EQ(lines.size(), 3u) << result.out;
    EXPECT_EQ(lines[0], "threads failed: 16 of 16");
    EXPECT_NE(lines[1].find("libcuda-for-loading"), std::string::npos) << lines[1];
    EXPECT_NE(lines[1].find("needed to load"), std::string::npos) << lines[1];
    EXPECT_EQ(lines[2], "library loads: 0");
}

TEST(ObjectCodeLoading, LtoIrIsRefusedWithAdviceToLinkTwice) {
    auto code = ObjectCode::from_ltoir(std::string(64, 'x'), "lto_part");
    std::string first, second;
    try { code.get_kernel("k"); } catch (const cudacore::InvalidArgumentError& e) { first = e.what(); }
    try { code.get_kernel("k"); } catch (const cudacore::InvalidArgumentError& e) { second = e.what(); }
    EXPECT_EQ(first, second);
    EXPECT_NE(first.find("ltoir 'lto_part' (64 bytes)"), std::string::npos) << first;
    EXPECT_NE(first.find("link"), std::string::npos) << first;
    EXPECT_NE(first.find("kernel 'k'"), std::string::npos) << first;
    EXPECT_THROW(code.load(), cudacore::InvalidArgumentError);
    EXPECT_FALSE(code.is_loaded());
}

TEST(ObjectCodeLoading, RelocatableObjectIsRefusedWithAdviceToLink) {
    auto code = ObjectCode::from_object(std::string(64, 'x'), "part.o");
    try {
        code.load();
        FAIL() << "an object file loaded";
    } catch (const cudacore::InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("linked first"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("object 'part.o'"), std::string::npos) << e.what();
    }
}

TEST(ObjectCodeLoading, CopiesShareTheLoadingStateAndEqualValuesStayEqual) {
    auto code = ObjectCode::from_ltoir(std::string(8, 'x'), "a");
    using cudacore::detail::ObjectCodeAccess;
    using cudacore::detail::lazy_library_if_made;
    EXPECT_EQ(lazy_library_if_made(*ObjectCodeAccess::state(code)), nullptr);  // made on first load, not before
    ObjectCode copy = code;
    EXPECT_EQ(ObjectCodeAccess::state(copy), ObjectCodeAccess::state(code));
    EXPECT_TRUE(copy == code);
    EXPECT_THROW(copy.load(), cudacore::InvalidArgumentError);  // failure recorded on the shared state
    ASSERT_NE(lazy_library_if_made(*ObjectCodeAccess::state(code)), nullptr);
    EXPECT_TRUE(lazy_library_if_made(*ObjectCodeAccess::state(code))->attempted.load());
}

TEST(LaunchConfig, DimensionsConvertAndPrint) {
    cudacore::LaunchConfig config{.grid = 4096, .block = {16, 16}, .shared_memory_bytes = 1024};
    EXPECT_EQ(config.grid, cudacore::Dim3(4096, 1, 1));
    EXPECT_EQ(config.block.volume(), 256u);
    EXPECT_TRUE(config.is_plain());
    EXPECT_EQ(cudacore::to_string(config),
              "grid (4096, 1, 1), block (16, 16, 1), 1024 bytes of dynamic shared memory");
    config.cluster = 2;
    config.cooperative = true;
    EXPECT_FALSE(config.is_plain());
    EXPECT_NE(cudacore::to_string(config).find("clusters of (2, 1, 1) blocks (8192 blocks)"),
              std::string::npos)
        << cudacore::to_string(config);
    EXPECT_NE(cudacore::to_string(config).find("cooperative"), std::string::npos);
}

// As in cuda.core, a cluster makes the grid count clusters: the driver is given grid x cluster.
TEST(LaunchConfig, WithAClusterTheGridCountsClusters) {
    cudacore::LaunchConfig config{.grid = 4, .block = 32, .cluster = 2};
    EXPECT_EQ(config.blocks().volume(), 8u);
    CUlaunchAttribute attributes[2];
    CUlaunchConfig driver = cudacore::detail::to_driver_config(config, nullptr, attributes);
    EXPECT_EQ(driver.gridDimX, 8u);
    EXPECT_EQ(driver.gridDimY, 1u);
    ASSERT_EQ(driver.numAttrs, 1u);
    EXPECT_EQ(attributes[0].id, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
    EXPECT_EQ(attributes[0].value.clusterDim.x, 2u);

    config = {.grid = {2, 3}, .block = 32, .cluster = {2, 2}};
    EXPECT_EQ(config.blocks().volume(), 24u);
    driver = cudacore::detail::to_driver_config(config, nullptr, attributes);
    EXPECT_EQ(driver.gridDimX, 4u);
    EXPECT_EQ(driver.gridDimY, 6u);
    EXPECT_EQ(driver.gridDimZ, 1u);

    config = {.grid = {2, 3}, .block = 32};  // no cluster: the grid is blocks
    driver = cudacore::detail::to_driver_config(config, nullptr, attributes);
    EXPECT_EQ(driver.gridDimX, 2u);
    EXPECT_EQ(driver.gridDimY, 3u);
    EXPECT_EQ(driver.numAttrs, 0u);
}

// --- compile-time checks of launch()'s arguments.

struct Mixed {
    int a;
    double b;
};
static_assert(std::is_same_v<cudacore::detail::converted_argument_t<float>, float>);
static_assert(std::is_same_v<cudacore::detail::converted_argument_t<const float*>, const float*>);
static_assert(std::is_same_v<cudacore::detail::converted_argument_t<Mixed>, Mixed>);

// Whether launch(stream, config, kernel, args...) compiles.
struct Launcher {
    template <class... A>
    auto operator()(A&&... a) const -> decltype(cudacore::launch(std::forward<A>(a)...)) {}
};
using Saxpy = cudacore::TypedKernel<void(float, const float*, float*, std::size_t)>;
using S = const cudacore::Stream&;
using C = const cudacore::LaunchConfig&;
static_assert(std::is_invocable_v<Launcher, S, C, const Saxpy&, float, const float*, float*,
                                  std::size_t>);
// Implicit conversions as in a call: float* -> const float*, int -> float / size_t.
static_assert(std::is_invocable_v<Launcher, S, C, const Saxpy&, int, float*, float*, int>);
// Wrong count, wrong pointer types: do not compile.
static_assert(!std::is_invocable_v<Launcher, S, C, const Saxpy&, float, const float*, float*>);
static_assert(!std::is_invocable_v<Launcher, S, C, const Saxpy&, float, const int*, float*,
                                   std::size_t>);
static_assert(!std::is_invocable_v<Launcher, S, C, const Saxpy&, float, const float*,
                                   const float*, std::size_t>);

TEST(Launch, TypedKernelChecksCompileTime) { SUCCEED() << "checked by static_assert above"; }

}  // namespace
