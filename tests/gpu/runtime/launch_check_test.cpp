// Launch configurations checked before the launch (launch_check.hpp), grids made from a size and
// from occupancy (grid_sizing.hpp), on a real GPU: each refusal gives its reason, what fits
// launches and computes the right result.
#include "test_support.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/grid_sizing.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/launch_check.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/program.hpp"

#include <optional>
#include <string>
#include <vector>

namespace {

using namespace cudacore;

constexpr const char* kSource = R"(
extern "C" __global__ void __launch_bounds__(128) bounded(int* out) {
    out[blockIdx.x * blockDim.x + threadIdx.x] = 1;
}
extern "C" __global__ void fill(unsigned* out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = i * 3u;
}
extern "C" __global__ void stride_fill(unsigned* out, unsigned n) {
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[i] = i * 3u;
}
)";

constexpr const char* kClusterSource = R"(
extern "C" __global__ void __cluster_dims__(2, 1, 1) clustered(int* out) {
    out[blockIdx.x] = 1;
}
extern "C" __global__ void free_cluster(int* out) { out[blockIdx.x] = 1; }
)";

ObjectCode compile(const char* source) {
    ProgramOptions options;
    options.name = "launch_check_test";
    options.arch = Device(0).arch();
    return Program(source, SourceType::cxx, options).compile(CodeType::cubin);
}

bool contains(const std::optional<std::string>& reason, const std::string& part) {
    return reason && reason->find(part) != std::string::npos;
}

class LaunchCheckGpu : public ::testing::Test {
protected:
    void SetUp() override {
        CUDACORE_REQUIRE_GPU();
        code_.emplace(compile(kSource));
    }
    Kernel kernel(const char* name) const { return code_->get_kernel(name); }
    std::optional<ObjectCode> code_;
};

TEST_F(LaunchCheckGpu, AConfigThatFitsHasNoProblem) {
    const Device device(0);
    EXPECT_EQ(launch_problem({.grid = 4, .block = 256}, kernel("fill"), device), std::nullopt);
    EXPECT_NO_THROW(check_launch({.grid = 4, .block = 256}, kernel("fill"), device));
    EXPECT_EQ(launch_problem({.grid = {8, 8}, .block = {16, 16}}, kernel("fill")), std::nullopt)
        << "the current device by default";
}

TEST_F(LaunchCheckGpu, ABlockOverTheKernelsLimitIsTheSameReasonLaunchGives) {
    const Device device(0);
    const LaunchConfig config{.grid = 1, .block = 256};
    const std::optional<std::string> reason = launch_problem(config, kernel("bounded"), device);
    ASSERT_TRUE(reason.has_value());
    EXPECT_TRUE(contains(reason, "the block has 256 threads, over the kernel's limit of 128")) << *reason;
    EXPECT_TRUE(contains(reason, "kernel 'bounded'")) << *reason;
    try {
        check_launch(config, kernel("bounded"), device);
        ADD_FAILURE() << "check_launch did not throw";
    } catch (const InvalidArgumentError& e) {
        EXPECT_EQ(std::string(e.what()), *reason);
    }
    const Stream stream = device.create_stream();
    Buffer out = device.allocate(256 * sizeof(int), stream);
    try {
        launch(stream, config, kernel("bounded"), out);
        ADD_FAILURE() << "launch did not refuse";
    } catch (const InvalidArgumentError& e) {
        EXPECT_EQ(std::string(e.what()), *reason) << "launch() and the check say the same";
    }
}

TEST_F(LaunchCheckGpu, DimensionsOverTheDevicesLimitsAreNamed) {
    const Device device(0);
    const int z_limit = device.attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
    const std::optional<std::string> block =
        launch_problem({.grid = 1, .block = {1, 1, static_cast<unsigned>(z_limit) * 2}}, kernel("fill"), device);
    EXPECT_TRUE(contains(block, "the block is " + std::to_string(z_limit * 2) + " in z, over the device's limit of " +
                                    std::to_string(z_limit)))
        << block.value_or("<none>");
    const std::optional<std::string> grid =
        launch_problem({.grid = {1, 70000}, .block = 32}, kernel("fill"), device);
    EXPECT_TRUE(contains(grid, "the grid, in blocks, is 70000 in y, over the device's limit of 65535"))
        << grid.value_or("<none>");
}

TEST_F(LaunchCheckGpu, TooMuchDynamicSharedMemoryIsRefused) {
    const Device device(0);
    const int optin = device.attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    const std::optional<std::string> reason = launch_problem(
        {.grid = 1, .block = 32, .shared_memory_bytes = static_cast<std::size_t>(optin) + 1024},
        kernel("fill"), device);
    EXPECT_TRUE(contains(reason, "bytes of dynamic shared memory is over the kernel's limit"))
        << reason.value_or("<none>");
}

TEST_F(LaunchCheckGpu, ClusterLimitsAreChecked) {
    const Device device(0);
    if (device.compute_capability().major < 9) {
        const std::optional<std::string> reason =
            launch_problem({.grid = 2, .block = 32, .cluster = 2}, kernel("fill"), device);
        EXPECT_TRUE(contains(reason, "cluster launches")) << reason.value_or("<none>");
        return;
    }
    const ObjectCode clusters = compile(kClusterSource);
    EXPECT_EQ(launch_problem({.grid = 4, .block = 64, .cluster = 2}, clusters.get_kernel("free_cluster"), device),
              std::nullopt);
    const std::optional<std::string> portable =
        launch_problem({.grid = 2, .block = 32, .cluster = 16}, clusters.get_kernel("free_cluster"), device);
    EXPECT_TRUE(contains(portable, "over the portable limit of 8")) << portable.value_or("<none>");
    const std::optional<std::string> required =
        launch_problem({.grid = 2, .block = 32, .cluster = 4}, clusters.get_kernel("clustered"), device);
    EXPECT_TRUE(contains(required, "requires clusters of (2, 1, 1) blocks")) << required.value_or("<none>");
    EXPECT_EQ(launch_problem({.grid = 2, .block = 32, .cluster = 2}, clusters.get_kernel("clustered"), device),
              std::nullopt);
}

TEST_F(LaunchCheckGpu, ACooperativeGridOverTheResidentBlocksIsRefused) {
    const Device device(0);
    if (!device.attribute(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH)) GTEST_SKIP() << "no cooperative launch";
    const Kernel fill = kernel("fill");
    const int per_sm = fill.occupancy(device).max_active_blocks_per_multiprocessor(1024, 0);
    const unsigned resident = static_cast<unsigned>(per_sm * device.multiprocessor_count());
    EXPECT_EQ(launch_problem({.grid = resident, .block = 1024, .cooperative = true}, fill, device), std::nullopt);
    const std::optional<std::string> reason =
        launch_problem({.grid = resident + 1, .block = 1024, .cooperative = true}, fill, device);
    EXPECT_TRUE(contains(reason, "can be resident at once")) << reason.value_or("<none>");
}

TEST_F(LaunchCheckGpu, GridForASizeCoversItAndOccupancyConfigsRun) {
    const Device device(0);
    const Stream stream = device.create_stream();
    const unsigned n = 1000003;
    Buffer out = device.allocate(n * sizeof(unsigned), stream);
    auto expect_filled = [&](const char* what) {
        std::vector<unsigned> host(n);
        out.copy_to(host, stream);
        stream.sync();
        for (unsigned i = 0; i < n; ++i) ASSERT_EQ(host[i], i * 3u) << what << " at " << i;
        out.fill_byte(0, stream);
    };
    const Kernel fill = kernel("fill");
    launch(stream, {.grid = grid_for(n, 256), .block = 256}, fill, out, n);
    expect_filled("grid_for");

    const LaunchConfig covering = occupancy_config(fill, device, {.elements = n});
    EXPECT_GT(covering.block.x, 0u);
    EXPECT_GE(std::uint64_t{covering.grid.x} * covering.block.x, n);
    EXPECT_EQ(launch_problem(covering, fill, device), std::nullopt);
    launch(stream, covering, fill, out, n);
    expect_filled("occupancy_config with elements");

    const Kernel stride = kernel("stride_fill");
    const LaunchConfig filling = occupancy_config(stride, device);
    const BlockSizeSuggestion best = stride.occupancy(device).max_potential_block_size();
    EXPECT_EQ(filling.block.x, static_cast<unsigned>(best.block_size));
    EXPECT_EQ(filling.grid.x, static_cast<unsigned>(best.min_grid_size)) << "fills the device";
    launch(stream, filling, stride, out, n);
    expect_filled("occupancy_config filling the device");
}

}  // namespace
