// launch() on a real GPU: mixed arguments reach the device intact, mismatches are refused before
// the launch, typed kernels, clusters, cooperative launches, large dynamic shared memory, config
// checks, and the Kernel queries (attributes, occupancy, parameters, from_handle).
#include "test_support.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/program.hpp"
#include "kernel_sources.hpp"
#include "loader/driver_api.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"

#include <algorithm>
#include <functional>
#include <numeric>
#include <optional>
#include <vector>

namespace {

using namespace cudacore;

ObjectCode compile(const char* source, const std::vector<std::string>& names = {}) {
    ProgramOptions options;
    options.name = "launch_test";
    options.arch = Device(0).arch();
    return Program(source, SourceType::cxx, options).compile(CodeType::cubin, names);
}

struct Pair {  // the device's struct Pair { int i; double d; }
    int i;
    double d;
};

std::string message_of(const std::function<void()>& call) {
    try {
        call();
    } catch (const InvalidArgumentError& e) {
        return e.what();
    }
    return "<no InvalidArgumentError>";
}

class LaunchGpu : public ::testing::Test {
protected:
    void SetUp() override {
        CUDACORE_REQUIRE_GPU();
        device_.emplace(0);
        stream_.emplace(device_->create_stream());
    }
    const Device& device() const { return *device_; }
    const Stream& stream() const { return *stream_; }

    std::optional<Device> device_;
    std::optional<Stream> stream_;
};

TEST_F(LaunchGpu, EightMixedArgumentsReachTheDevice) {
    ObjectCode code = compile(test::kMixedSource);
    Kernel kernel = code.get_kernel("mixed");
    ASSERT_EQ(kernel.parameter_count(), 8u);
    std::vector<int> input{-12345};
    Buffer in = device().allocate(sizeof(int), stream());
    in.copy_from(input, stream());
    Buffer out = device().allocate(8 * sizeof(double), stream());
    out.fill_byte(0, stream());

    const Pair pair{-7, 2.25};
    const unsigned long long big = 1ull << 40;
    launch(stream(), LaunchConfig{}, kernel, 123, 4.5, in, 'z', pair, big, 1.5f, out);
    std::vector<double> result(8);
    out.copy_to(result, stream());
    stream().sync();
    EXPECT_EQ(result[0], 123.0);
    EXPECT_EQ(result[1], 4.5);
    EXPECT_EQ(result[2], -12345.0);
    EXPECT_EQ(result[3], double('z'));
    EXPECT_EQ(result[4], -7.0);
    EXPECT_EQ(result[5], 2.25);
    EXPECT_EQ(result[6], double(big));
    EXPECT_EQ(result[7], 1.5);
}

TEST_F(LaunchGpu, WrongArgumentCountAndSizesAreRefusedBeforeTheLaunch) {
    ObjectCode code = compile(test::kMixedSource);
    Kernel kernel = code.get_kernel("mixed");
    Buffer in = device().allocate(sizeof(int), stream());
    Buffer out = device().allocate(8 * sizeof(double), stream());
    out.fill_byte(0xAB, stream());
    const Pair pair{1, 2.0};

    const std::string too_few = message_of(
        [&] { launch(stream(), LaunchConfig{}, kernel, 1, 2.0, in, 'c', pair, 3ull, 4.0f); });
    EXPECT_NE(too_few.find("takes 8 argument(s), 7 given"), std::string::npos) << too_few;
    EXPECT_NE(too_few.find("kernel 'mixed'"), std::string::npos) << too_few;

    // A float where parameter 1 is a double.
    const std::string wrong_size = message_of(
        [&] { launch(stream(), LaunchConfig{}, kernel, 1, 2.0f, in, 'c', pair, 3ull, 4.0f, out); });
    EXPECT_NE(wrong_size.find("argument 1 is 4 bytes, but parameter 1"), std::string::npos)
        << wrong_size;
    EXPECT_NE(wrong_size.find("is 8 bytes"), std::string::npos) << wrong_size;

    // An int where parameter 3 (char) is 1 byte.
    const std::string wrong_char = message_of(
        [&] { launch(stream(), LaunchConfig{}, kernel, 1, 2.0, in, 99, pair, 3ull, 4.0f, out); });
    EXPECT_NE(wrong_char.find("argument 3 is 4 bytes"), std::string::npos) << wrong_char;

    // Nothing ran: the output still holds the fill pattern.
    std::vector<unsigned char> bytes(8 * sizeof(double));
    out.copy_to(bytes, stream());
    stream().sync();
    for (unsigned char byte : bytes) ASSERT_EQ(byte, 0xAB);
}

// An int where the kernel takes a size_t (saxpy's n, the 4th parameter at offset 24): refused
// before the driver, naming the position and both sizes; nothing runs.
TEST_F(LaunchGpu, AnIntForASizeTParameterIsRefusedNamingPositionAndSizes) {
    ObjectCode code = compile(test::kSaxpySource);
    Kernel saxpy = code.get_kernel("saxpy");
    Buffer x = device().allocate(16 * sizeof(float), stream());
    Buffer y = device().allocate(16 * sizeof(float), stream());
    const std::string message =
        message_of([&] { launch(stream(), LaunchConfig{.grid = 1, .block = 16}, saxpy, 2.0f, x, y, 16); });
    EXPECT_NE(message.find("argument 3 is 4 bytes, but parameter 3 (the 4th of 4, at offset 24) is 8 bytes"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("kernel 'saxpy'"), std::string::npos) << message;
    launch(stream(), LaunchConfig{.grid = 1, .block = 16}, saxpy, 2.0f, x, y, std::size_t{16});
    stream().sync();
}

TEST_F(LaunchGpu, TypedKernelLaunchesAndRefusesAMismatchedSignature) {
    ObjectCode code = compile(test::kSaxpySource);
    using Saxpy = TypedKernel<void(float, const float*, float*, std::size_t)>;
    Saxpy saxpy(code.get_kernel("saxpy"));
    const std::size_t n = 1000;
    std::vector<float> x(n), y(n);
    std::iota(x.begin(), x.end(), 0.0f);
    std::fill(y.begin(), y.end(), 1.0f);
    Buffer dx = device().allocate(n * sizeof(float), stream());
    Buffer dy = device().allocate(n * sizeof(float), stream());
    dx.copy_from(x, stream());
    dy.copy_from(y, stream());
    launch(stream(), LaunchConfig{.grid = 4, .block = 256}, saxpy, 2.0f,
           static_cast<const float*>(dx.data()), static_cast<float*>(dy.data()), n);
    std::vector<float> out(n);
    dy.copy_to(out, stream());
    stream().sync();
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], 2.0f * x[i] + 1.0f) << i;

    using Wrong = TypedKernel<void(float, const float*, float*, int)>;  // int, not size_t
    const std::string message = message_of([&] { Wrong wrong(code.get_kernel("saxpy")); });
    EXPECT_NE(message.find("argument 3 is 4 bytes, but parameter 3"), std::string::npos) << message;
}

TEST_F(LaunchGpu, InvalidConfigsAreClearErrors) {
    ObjectCode code = compile(test::kFeatureSource);
    Kernel bounded = code.get_kernel("bounded");
    EXPECT_EQ(bounded.max_threads_per_block(device()), 128);
    Buffer out = device().allocate(4096 * sizeof(int), stream());

    std::string message = message_of([&] { launch(stream(), {.grid = 0, .block = 32}, bounded, out); });
    EXPECT_NE(message.find("the grid has a zero dimension"), std::string::npos) << message;
    message = message_of([&] { launch(stream(), {.grid = 1, .block = {32, 0}}, bounded, out); });
    EXPECT_NE(message.find("the block has a zero dimension"), std::string::npos) << message;
    message = message_of([&] { launch(stream(), {.grid = 1, .block = 256}, bounded, out); });
    EXPECT_NE(message.find("256 threads, over the kernel's limit of 128"), std::string::npos)
        << message;
    message = message_of(
        [&] { launch(stream(), {.grid = 1, .block = 32, .shared_memory_bytes = 1 << 20}, bounded, out); });
    EXPECT_NE(message.find("over the kernel's limit"), std::string::npos) << message;
    EXPECT_NE(message.find("set_max_dynamic_shared_size_bytes"), std::string::npos) << message;
    if (device().compute_capability().major >= 9) {
        // The grid counts clusters: grid x cluster must fit the driver's 32-bit dimensions.
        message = message_of([&] {
            launch(stream(), {.grid = 0x80000000u, .block = 32, .cluster = 2}, bounded, out);
        });
        EXPECT_NE(message.find("over the driver's 32-bit grid dimensions"), std::string::npos)
            << message;
    } else {
        message = message_of(
            [&] { launch(stream(), {.grid = 2, .block = 32, .cluster = 2}, bounded, out); });
        EXPECT_NE(message.find("does not support cluster launches"), std::string::npos) << message;
    }
    launch(stream(), {.grid = 2, .block = 128}, bounded, out);  // within the limits: runs
    stream().sync();
}

TEST_F(LaunchGpu, ClusterLaunch) {
    if (device().compute_capability().major < 9) GTEST_SKIP() << "clusters need sm_90 or newer";
    ObjectCode code = compile(test::kFeatureSource);
    Kernel kernel = code.get_kernel("cluster_ranks");
    const unsigned blocks = 8;
    Buffer ranks = device().allocate(blocks * sizeof(unsigned), stream());
    Buffer sizes = device().allocate(blocks * sizeof(unsigned), stream());
    // With a cluster the grid counts clusters: 4 clusters of 2 blocks.
    launch(stream(), {.grid = blocks / 2, .block = 32, .cluster = 2}, kernel, ranks, sizes);
    std::vector<unsigned> rank(blocks), size(blocks);
    ranks.copy_to(rank, stream());
    sizes.copy_to(size, stream());
    stream().sync();
    for (unsigned b = 0; b < blocks; ++b) {
        EXPECT_EQ(size[b], 2u) << b;
        EXPECT_EQ(rank[b], b % 2) << b;
    }
    // Occupancy with clusters.
    KernelOccupancy occupancy = kernel.occupancy(device());
    EXPECT_GE(occupancy.max_potential_cluster_size({.grid = 16, .block = 32}), 2);
    EXPECT_GT(occupancy.max_active_clusters({.grid = 16, .block = 32, .cluster = 2}), 0);
}

// As in cuda.core, a cluster makes the grid count clusters: every block of grid x cluster runs.
TEST_F(LaunchGpu, WithAClusterTheGridCountsClusters) {
    if (device().compute_capability().major < 9) GTEST_SKIP() << "clusters need sm_90 or newer";
    ObjectCode code = compile(R"(
extern "C" __global__ void count_blocks(unsigned* count) {
    if (threadIdx.x == 0 && threadIdx.y == 0) atomicAdd(count, 1u);
})");
    Kernel kernel = code.get_kernel("count_blocks");
    auto blocks_run = [&](const LaunchConfig& config) {
        Buffer count = device().allocate(sizeof(unsigned), stream());
        count.fill_byte(0, stream());
        launch(stream(), config, kernel, count);
        std::vector<unsigned> host(1, 0);
        count.copy_to(host, stream());
        stream().sync();
        return host[0];
    };
    EXPECT_EQ(blocks_run({.grid = 4, .block = 32, .cluster = 2}), 8u);
    EXPECT_EQ(blocks_run({.grid = {2, 3}, .block = 32, .cluster = {2, 2}}), 24u);
    EXPECT_EQ(blocks_run({.grid = {2, 3}, .block = 32}), 6u);  // no cluster: the grid is blocks
}

TEST_F(LaunchGpu, CooperativeLaunchSynchronisesTheGrid) {
    ObjectCode code = compile(test::kFeatureSource);
    Kernel kernel = code.get_kernel("grid_sum");
    // As many blocks as can be resident at once (a cooperative launch needs them all).
    const int per_sm = kernel.occupancy(device()).max_active_blocks_per_multiprocessor(64);
    ASSERT_GT(per_sm, 0);
    const unsigned blocks = unsigned(per_sm * device().multiprocessor_count());
    Buffer slots = device().allocate(blocks * sizeof(unsigned), stream());
    slots.fill_byte(0, stream());
    Buffer total = device().allocate(sizeof(unsigned long long), stream());
    launch(stream(), {.grid = blocks, .block = 64, .cooperative = true}, kernel, slots, total);
    std::vector<unsigned long long> sum(1);
    total.copy_to(sum, stream());
    stream().sync();
    EXPECT_EQ(sum[0], (unsigned long long)blocks * (blocks + 1) / 2);
}

TEST_F(LaunchGpu, DynamicSharedMemoryOver48KbAfterSettingTheAttribute) {
    ObjectCode code = compile(test::kFeatureSource);
    Kernel kernel = code.get_kernel("shared_sum");
    const int optin = device().attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    const int bytes = std::min(optin - kernel.shared_size_bytes(device()), 96 * 1024);
    ASSERT_GT(bytes, 48 * 1024) << "the device cannot opt in to more than 48 KB";
    const unsigned count = unsigned(bytes / sizeof(float));
    Buffer out = device().allocate(sizeof(float), stream());
    const LaunchConfig config{.grid = 1, .block = 256, .shared_memory_bytes = std::size_t(bytes)};

    const std::string refused = message_of([&] { launch(stream(), config, kernel, out, count); });
    EXPECT_NE(refused.find("over the kernel's limit"), std::string::npos) << refused;

    kernel.set_max_dynamic_shared_size_bytes(bytes, device());
    EXPECT_EQ(kernel.max_dynamic_shared_size_bytes(device()), bytes);
    launch(stream(), config, kernel, out, count);
    std::vector<float> sum(1);
    out.copy_to(sum, stream());
    stream().sync();
    EXPECT_EQ(sum[0], float(count));
}

TEST_F(LaunchGpu, AttributesOccupancyAndParameters) {
    ObjectCode code = compile(test::kSaxpySource);
    Kernel kernel = code.get_kernel("saxpy");
    const std::vector<KernelParameter> expected{{0, 4}, {8, 8}, {16, 8}, {24, 8}};
    EXPECT_EQ(kernel.parameters(), expected);

    KernelAttributes attributes = kernel.attributes(device());
    const ComputeCapability cc = device().compute_capability();
    EXPECT_EQ(attributes.binary_version, cc.major * 10 + cc.minor);
    EXPECT_GT(attributes.ptx_version, 0);
    EXPECT_GT(attributes.num_registers, 0);
    EXPECT_EQ(attributes.max_threads_per_block, kernel.max_threads_per_block(device()));
    EXPECT_EQ(attributes.shared_size_bytes, 0);
    EXPECT_EQ(attributes.local_size_bytes, 0);
    EXPECT_EQ(attributes.max_dynamic_shared_size_bytes, kernel.max_dynamic_shared_size_bytes(device()));

    KernelOccupancy occupancy = kernel.occupancy(device());
    const int blocks = occupancy.max_active_blocks_per_multiprocessor(256);
    EXPECT_GT(blocks, 0);
    EXPECT_LE(blocks * 256, device().attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR));
    BlockSizeSuggestion suggestion = occupancy.max_potential_block_size();
    EXPECT_GT(suggestion.block_size, 0);
    EXPECT_LE(suggestion.block_size, attributes.max_threads_per_block);
    EXPECT_GT(suggestion.min_grid_size, 0);
    EXPECT_GT(occupancy.available_dynamic_shared_memory_per_block(1, 256), 0u);

    Kernel wrapped = Kernel::from_handle(kernel.handle());
    EXPECT_EQ(wrapped.handle(), kernel.handle());
    EXPECT_EQ(wrapped.lowered_name(), "saxpy");
    EXPECT_EQ(wrapped.parameters(), expected);
}

// A kernel's parameter count is read from its code at the first use; a kernel whose ObjectCode
// went before that still knows it (read as the code went), so the layout is found without a
// failing driver call (this test is not in tests/sanitize_expected_errors.txt), and its
// description, made on first use too, still names the code.
TEST_F(LaunchGpu, KernelWhoseCodeWentBeforeItsFirstUseKnowsItsParameters) {
    Kernel kernel = [&] {
        ObjectCode code = compile(test::kSaxpySource);
        return code.get_kernel("saxpy");
    }();
    const std::vector<KernelParameter> expected{{0, 4}, {8, 8}, {16, 8}, {24, 8}};
    EXPECT_EQ(kernel.parameters(), expected);
    EXPECT_EQ(kernel.description().rfind("kernel 'saxpy' (cubin", 0), 0u) << kernel.description();
    EXPECT_NE(kernel.description().find(" bytes))"), std::string::npos) << kernel.description();
}

// Parameters are found without a failing driver call: counted by the driver where it can
// (cuKernelGetParamCount, CUDA 13.2+), else read from the cubin or PTX. Either way they agree with
// what probing cuKernelGetParamInfo until it fails finds (done here, on purpose: this test is
// listed in tests/sanitize_expected_errors.txt).
TEST_F(LaunchGpu, ParametersAgreeWithTheDriverWithoutProbingPastTheLast) {
    constexpr const char* kSource = R"(
struct Wide { int a; double b; char c[20]; };
extern "C" __global__ void none() {}
extern "C" __global__ void three(int a, double b, char* c) { if (a) c[0] = char(b); }
extern "C" __global__ void eight(char a, short b, int c, long d, float e, double f, Wide g,
                                 int* h) { h[0] = a + b + c + d + e + f + g.a; })";
    ProgramOptions options;
    options.name = "parameters";
    options.arch = device().arch();
    detail::ContextScope scope(*detail::box_of(device().context()));
    for (CodeType type : {CodeType::cubin, CodeType::ptx}) {
        ObjectCode code = Program(kSource, SourceType::cxx, options).compile(type);
        for (const char* name : {"none", "three", "eight"}) {
            Kernel kernel = code.get_kernel(name);
            std::vector<KernelParameter> probed;
            for (std::size_t index = 0;; ++index) {
                KernelParameter parameter;
                if (detail::driver().cuKernelGetParamInfo(kernel.handle(), index, &parameter.offset,
                                                          &parameter.size) != CUDA_SUCCESS)
                    break;
                probed.push_back(parameter);
            }
            ASSERT_EQ(kernel.parameters().size(), probed.size()) << to_string(type) << " " << name;
            for (std::size_t i = 0; i < probed.size(); ++i) {
                EXPECT_EQ(kernel.parameters()[i].offset, probed[i].offset) << name << " " << i;
                EXPECT_EQ(kernel.parameters()[i].size, probed[i].size) << name << " " << i;
            }
            if (detail::driver().cuKernelGetParamCount) {
                std::size_t count = 99;
                ASSERT_EQ(detail::driver().cuKernelGetParamCount(kernel.handle(), &count),
                          CUDA_SUCCESS);
                EXPECT_EQ(count, probed.size()) << name;
            }
        }
    }
}

TEST_F(LaunchGpu, FromHandleNeverUnloads) {
    CUlibrary library = nullptr;
    ObjectCode code = compile(test::kSaxpySource);
    ASSERT_EQ(detail::driver().cuLibraryLoadData(&library, code.code().data(), nullptr, nullptr, 0,
                                                 nullptr, nullptr, 0),
              CUDA_SUCCESS);
    CUkernel handle = nullptr;
    ASSERT_EQ(detail::driver().cuLibraryGetKernel(&handle, library, "saxpy"), CUDA_SUCCESS);
    { Kernel wrapped = Kernel::from_handle(handle); }
    // Still usable: the wrapper did not unload the caller's library.
    Kernel again = Kernel::from_handle(handle);
    EXPECT_EQ(again.parameter_count(), 4u);
    EXPECT_EQ(detail::driver().cuLibraryUnload(library), CUDA_SUCCESS);
}

}  // namespace
