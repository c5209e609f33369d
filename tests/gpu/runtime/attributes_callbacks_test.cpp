// Launch attributes and host callbacks on a real GPU: a programmatic-dependent-launch pair gives
// the right result (overlap is measured in bench/globals_launch_bench), priority and memory sync
// domain launches run, refusals name the attribute; host functions run in stream order, their
// exceptions come back on the next call, and the per-thread default stream is usable.
#include "test_support.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/program.hpp"

#include <atomic>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

namespace {

using namespace cudacore;

// The primary kernel writes, then lets the secondary start early; the secondary does its
// independent part, waits for the primary's results (cudaGridDependencySynchronize) and reads.
constexpr const char* kPdlSource = R"(
#include <cuda_device_runtime_api.h>
extern "C" __global__ void produce(int* data, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] = i * 3;
    cudaTriggerProgrammaticLaunchCompletion();
}
extern "C" __global__ void consume(const int* data, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int independent = i + 1;  // work that does not need the producer
    cudaGridDependencySynchronize();
    if (i < n) out[i] = data[i] + independent;
}
)";

ObjectCode compile_pdl() {
    ProgramOptions options;
    options.name = "pdl.cu";
    options.arch = Device(0).arch();
    return Program(kPdlSource, SourceType::cxx, options).compile(CodeType::cubin);
}

class AttributesGpu : public ::testing::Test {
protected:
    void SetUp() override {
        CUDACORE_REQUIRE_GPU();
        device_.emplace(0);
        device_->set_current();
        stream_.emplace(device_->create_stream());
    }
    bool hopper() const { return device_->compute_capability().major >= 9; }
    const Stream& stream() const { return *stream_; }
    std::optional<Device> device_;
    std::optional<Stream> stream_;
};

TEST_F(AttributesGpu, ProgrammaticDependentLaunchPairIsCorrect) {
    const ObjectCode code = compile_pdl();
    constexpr int n = 1 << 20;
    Buffer data = device_->allocate(n * sizeof(int), stream());
    Buffer out = device_->allocate(n * sizeof(int), stream());
    const LaunchConfig first{.grid = n / 256, .block = 256};
    LaunchConfig second = first;
    second.programmatic_stream_serialization = true;
    if (!hopper()) {
        EXPECT_THROW(launch(stream(), second, code.get_kernel("consume"), data, out, n),
                     InvalidArgumentError);
        GTEST_SKIP() << "programmatic dependent launch needs compute capability 9.0";
    }
    for (int round = 0; round < 3; ++round) {
        data.fill_byte(0, stream());
        launch(stream(), first, code.get_kernel("produce"), data, n);
        launch(stream(), second, code.get_kernel("consume"), data, out, n);
    }
    std::vector<int> result(n);
    out.copy_to(result, stream());
    stream().sync();
    for (int i = 0; i < n; ++i) ASSERT_EQ(result[i], i * 3 + i + 1) << i;
}

TEST_F(AttributesGpu, PriorityAndMemorySyncDomainLaunchesRun) {
    const ObjectCode code = compile_pdl();
    constexpr int n = 256;
    Buffer data = device_->allocate(n * sizeof(int), stream());
    LaunchConfig config{.grid = 1, .block = n};
    config.priority = 0;
    config.preferred_shared_memory_carveout = 50;
    if (hopper()) config.memory_sync_domain = CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE;
    launch(stream(), config, code.get_kernel("produce"), data, n);
    std::vector<int> result(n);
    data.copy_to(result, stream());
    stream().sync();
    for (int i = 0; i < n; ++i) ASSERT_EQ(result[i], i * 3);
}

TEST_F(AttributesGpu, RefusalsNameTheAttribute) {
    const ObjectCode code = compile_pdl();
    Buffer data = device_->allocate(256 * sizeof(int), stream());
    LaunchConfig config{.grid = 1, .block = 256};
    config.preferred_shared_memory_carveout = 150;
    try {
        launch(stream(), config, code.get_kernel("produce"), data, 256);
        FAIL() << "a carveout over 100% was accepted";
    } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("preferred_shared_memory_carveout"), std::string::npos);
    }
    LaunchConfig preferred{.grid = 4, .block = 256};
    preferred.preferred_cluster = Dim3{4};
    try {
        launch(stream(), preferred, code.get_kernel("produce"), data, 256);
        FAIL() << "preferred_cluster without a cluster was accepted";
    } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("preferred_cluster"), std::string::npos) << e.what();
    }
}

TEST_F(AttributesGpu, HostFunctionsRunInStreamOrder) {
    auto order = std::make_shared<std::vector<int>>();
    Buffer data = device_->allocate(sizeof(int), stream());
    std::vector<int> host(1, 0);
    data.fill_uint32(17, stream());
    data.copy_to(host, stream());
    // Runs after the copy: sees its result.
    stream().launch_host_func([order, &host] { order->push_back(host[0]); });
    stream().launch_host_func([order] { order->push_back(2); });
    stream().sync();
    EXPECT_EQ(*order, (std::vector<int>{17, 2}));
}

TEST_F(AttributesGpu, HostFunctionExceptionIsReportedOnTheNextCall) {
    std::atomic<bool> after{false};
    stream().launch_host_func([] { throw std::runtime_error("callback failed on purpose"); });
    try {
        stream().sync();
        FAIL() << "the host function's exception was not reported";
    } catch (const HostFunctionError& e) {
        EXPECT_NE(std::string(e.what()).find("callback failed on purpose"), std::string::npos);
        EXPECT_THROW(std::rethrow_exception(e.original()), std::runtime_error);
    }
    // Reported once; the process and the stream go on.
    stream().launch_host_func([&after] { after = true; });
    EXPECT_NO_THROW(stream().sync());
    EXPECT_TRUE(after.load());
}

TEST_F(AttributesGpu, CapturedObjectsAreDestroyedOffTheCallbackThread) {
    // A callable owning the last copy of a Buffer: destroying it calls the driver, which must not
    // happen on the callback thread; it is destroyed on a later call instead.
    {
        Buffer owned = device_->allocate(1024, stream());
        stream().launch_host_func([owned] { (void)owned.size(); });
    }
    stream().sync();
    EXPECT_NO_THROW(stream().check_host_functions());
}

TEST_F(AttributesGpu, PerThreadDefaultStreamIsANamedStream) {
    const Stream per_thread = device_->per_thread_stream();
    EXPECT_EQ(per_thread.handle(), CU_STREAM_PER_THREAD);
    EXPECT_FALSE(per_thread.owns_handle());
    Buffer data = device_->allocate(sizeof(int), per_thread);
    data.fill_uint32(99, per_thread);
    std::vector<int> host(1, 0);
    data.copy_to(host, per_thread);
    bool ran = false;
    per_thread.launch_host_func([&ran] { ran = true; });
    per_thread.sync();
    EXPECT_EQ(host[0], 99);
    EXPECT_TRUE(ran);
}

}  // namespace
