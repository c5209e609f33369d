// Peer access between created contexts of two devices on real GPUs: a kernel in a context on
// device 0 reads and writes memory allocated in a created context on device 1 once access is
// enabled; the state reads back, disabling undoes it, and two contexts of one device are refused.
#include "test_support.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/context.hpp"
#include "cudacore/context_peer_access.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/kernel.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/program.hpp"
#include "cudacore/synchronous_memory_resource.hpp"

#include <memory>
#include <vector>

namespace {

using namespace cudacore;

#define REQUIRE_TWO_GPUS()                                                                \
    do {                                                                                  \
        CUDACORE_REQUIRE_GPU();                                                           \
        if (Device::count() < 2)                                                          \
            GTEST_SKIP() << "needs two GPUs, this machine has " << Device::count();       \
    } while (0)

constexpr const char* kernels = R"(
extern "C" __global__ void add_one(float* data, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] += 1.0f;
}
)";

TEST(ContextPeerAccessGpu, AKernelInOneCreatedContextReachesMemoryOfAnother) {
    REQUIRE_TWO_GPUS();
    const Device gpu0(0), gpu1(1);
    if (!gpu0.can_access_peer(gpu1)) GTEST_SKIP() << "devices 0 and 1 are not peers";
    const Context a = Context::create(gpu0);
    const Context b = Context::create(gpu1);
    EXPECT_FALSE(is_peer_access_enabled(a, b));
    EXPECT_TRUE(is_peer_access_enabled(a, a));
    enable_peer_access(a, b);
    enable_peer_access(a, b);  // twice: nothing more
    EXPECT_TRUE(is_peer_access_enabled(a, b));
    EXPECT_FALSE(is_peer_access_enabled(b, a));  // one way

    constexpr int n = 4096;
    const Stream on_b = b.create_stream();
    const auto memory_b = std::make_shared<SynchronousMemoryResource>(b);
    const Buffer data = memory_b->allocate(n * sizeof(float), on_b);
    std::vector<float> host(n);
    for (int i = 0; i < n; ++i) host[i] = float(i);
    data.copy_from(host, on_b);
    on_b.sync();

    ProgramOptions options;
    options.name = "context_peer_access_test";
    options.arch = gpu0.arch();
    const ObjectCode code = Program(kernels, SourceType::cxx, options).compile(CodeType::cubin);
    const Stream on_a = a.create_stream();
    launch(on_a, LaunchConfig{.grid = n / 256, .block = 256}, code.get_kernel("add_one"), data, n);
    on_a.sync();
    std::vector<float> back(n);
    data.copy_to(back, on_b);
    on_b.sync();
    for (int i = 0; i < n; ++i) ASSERT_EQ(back[i], float(i) + 1.0f) << i;

    disable_peer_access(a, b);
    EXPECT_FALSE(is_peer_access_enabled(a, b));
    disable_peer_access(a, b);  // not enabled: nothing
}

TEST(ContextPeerAccessGpu, ContextsOfOneDeviceAreRefused) {
    CUDACORE_REQUIRE_GPU();
    const Context a = Context::create(Device(0));
    const Context b = Context::create(Device(0));
    test::expect_invalid([&] { enable_peer_access(a, b); },
                         {"enable_peer_access", "same device", "two devices"});
    EXPECT_NO_THROW(enable_peer_access(a, a));  // a context reaches its own memory
}

TEST(ContextPeerAccessGpu, AccessEndsWithAContext) {
    REQUIRE_TWO_GPUS();
    const Device gpu0(0), gpu1(1);
    if (!gpu0.can_access_peer(gpu1)) GTEST_SKIP() << "devices 0 and 1 are not peers";
    const Context a = Context::create(gpu0);
    Context b = Context::create(gpu1);
    enable_peer_access(a, b);
    const Context b_copy = b;
    EXPECT_TRUE(is_peer_access_enabled(a, b_copy));
    b.close();  // destroys the context: the driver drops the access with it
    EXPECT_FALSE(is_peer_access_enabled(a, b_copy));
}

}  // namespace
