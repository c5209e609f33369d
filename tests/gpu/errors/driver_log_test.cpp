// The driver's own words in DriverError on a real GPU (CUDA 12.9 error log): five different
// failures provoked on purpose, each through the library's one check of a driver status, and each
// message printed so it can be quoted. Where the driver logged something, the message quotes it;
// at least three of the five must carry log text, and no case's lines may reach the next one:
// the driver ends a failed call's lines with "Returning N (NAME) from ENTRY_POINT", so an error
// holds at most one such line, naming its own call.
#include "test_support.hpp"

#include "cudacore/device.hpp"
#include "cudacore/kernel.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/program.hpp"
#include "cudacore/stream.hpp"
#include "loader/driver_api.hpp"

#include <cstdio>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace cudacore;

struct Failure {
    std::string name;
    std::string entry_point;  // what the driver's "Returning ... from" line must name
    std::string message;
    std::vector<std::string> driver_log;
};

// Runs `call`, which must throw DriverError, and prints what it said.
template <class Call>
Failure provoke(const std::string& name, const std::string& entry_point, Call&& call) {
    Failure failure{name, entry_point, {}, {}};
    try {
        call();
        ADD_FAILURE() << name << ": the driver accepted it";
    } catch (const DriverError& error) {
        failure.message = error.what();
        failure.driver_log = error.driver_log();
    }
    std::printf("[%s] %s\n", name.c_str(), failure.message.c_str());
    if (failure.driver_log.empty())
        std::printf("[%s] THE DRIVER LOGGED NOTHING for this failure\n", name.c_str());
    return failure;
}

// The log's "Returning ... from" lines: at most one, naming the failure's own entry point (a
// second one would be an earlier failure's, leaked).
void expect_only_its_own_return(const Failure& failure) {
    int returns = 0;
    for (const auto& line : failure.driver_log) {
        if (line.find("Returning ") == std::string::npos) continue;
        ++returns;
        EXPECT_NE(line.find("from " + failure.entry_point), std::string::npos)
            << failure.name << ": " << line;
    }
    EXPECT_LE(returns, 1) << failure.name << ": " << failure.message;
}

bool has_error_log() {
    if (detail::driver().cuLogsRegisterCallback) return true;
    std::printf("this driver (%d) has no error log (cuLogsRegisterCallback, CUDA 12.9)\n",
                detail::driver().driver_version);
    return false;
}

constexpr const char* kSharedSource = R"(
extern "C" __global__ void uses_shared(int* out) {
    extern __shared__ int scratch[];
    scratch[threadIdx.x] = threadIdx.x;
    __syncthreads();
    if (out) out[threadIdx.x] = scratch[threadIdx.x];
}
)";

CUfunction shared_kernel(const Device& device) {
    ProgramOptions options;
    options.name = "driver_log_test";
    options.arch = device.arch();
    static const ObjectCode code =
        Program(kSharedSource, SourceType::cxx, options).compile(CodeType::cubin);
    // cuLaunchKernel takes a CUkernel where it takes a CUfunction (CUDA 12.0).
    return reinterpret_cast<CUfunction>(code.get_kernel("uses_shared").handle());
}

void launch(CUfunction kernel, unsigned grid_y, unsigned shared_bytes, CUstream stream) {
    int* out = nullptr;
    void* arguments[] = {&out};
    detail::check(detail::driver().cuLaunchKernel(kernel, 1, grid_y, 1, 32, 1, 1, shared_bytes,
                                                  stream, arguments, nullptr),
                  "cuLaunchKernel", "uses_shared");
}

// An executable graph of one empty node, updated from a graph of two: another topology.
void update_from_another_topology() {
    const auto& driver = detail::driver();
    CUgraph one = nullptr, two = nullptr;
    CUgraphExec exec = nullptr;
    CUgraphNode node = nullptr;
    detail::check(driver.cuGraphCreate(&one, 0), "cuGraphCreate");
    detail::check(driver.cuGraphCreate(&two, 0), "cuGraphCreate");
    detail::check(driver.cuGraphAddEmptyNode(&node, one, nullptr, 0), "cuGraphAddEmptyNode");
    detail::check(driver.cuGraphAddEmptyNode(&node, two, nullptr, 0), "cuGraphAddEmptyNode");
    detail::check(driver.cuGraphAddEmptyNode(&node, two, nullptr, 0), "cuGraphAddEmptyNode");
    detail::check(driver.cuGraphInstantiateWithFlags(&exec, one, 0), "cuGraphInstantiateWithFlags");
    CUgraphExecUpdateResultInfo info{};
    const CUresult status = driver.cuGraphExecUpdate(exec, two, &info);
    driver.cuGraphExecDestroy(exec);
    driver.cuGraphDestroy(one);
    driver.cuGraphDestroy(two);
    detail::check(status, "cuGraphExecUpdate", "a one-node graph from a two-node one");
}

// A pool's high watermark may only be reset to 0.
void set_pool_high_watermark(const Device& device) {
    CUmemoryPool pool = nullptr;
    detail::check(detail::driver().cuDeviceGetDefaultMemPool(&pool, device.ordinal()),
                  "cuDeviceGetDefaultMemPool");
    cuuint64_t value = 12345;
    detail::check(detail::driver().cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &value),
                  "cuMemPoolSetAttribute", "CU_MEMPOOL_ATTR_USED_MEM_HIGH = 12345, default pool");
}

TEST(DriverLogGpu, FiveFailuresCarryTheDriversOwnWords) {
    CUDACORE_REQUIRE_GPU();
    if (!has_error_log()) GTEST_SKIP() << "the driver has no error log (CUDA 12.9 or newer needed)";
    const Device device(0);
    const Context context = device.set_current();
    const Stream stream = device.create_stream();
    const CUfunction kernel = shared_kernel(device);
    std::vector<Failure> failures;
    failures.push_back(provoke("launch with 1 GiB of dynamic shared memory", "cuLaunchKernel",
                               [&] { launch(kernel, 1, 1u << 30, stream.handle()); }));
    failures.push_back(provoke("launch with gridDim.y = 70000", "cuLaunchKernel",
                               [&] { launch(kernel, 70000, 0, stream.handle()); }));
    failures.push_back(provoke("copy to an invalid device pointer", "cuMemcpyHtoDAsync", [&] {
        int host[4] = {};
        detail::check(detail::driver().cuMemcpyHtoDAsync(CUdeviceptr{0x10}, host, sizeof host,
                                                         stream.handle()),
                      "cuMemcpyHtoDAsync", "16 bytes to 0x10");
    }));
    failures.push_back(provoke("graph update from another topology", "cuGraphExecUpdate",
                               update_from_another_topology));
    failures.push_back(provoke("pool high watermark set to a non-zero value", "cuMemPoolSetAttribute",
                               [&] { set_pool_high_watermark(device); }));
    stream.sync();  // none of these failures is sticky: the stream still works

    int with_log = 0;
    for (const Failure& failure : failures) {
        ASSERT_FALSE(failure.message.empty()) << failure.name;
        if (failure.driver_log.empty()) continue;
        ++with_log;
        for (const auto& line : failure.driver_log)
            EXPECT_NE(failure.message.find(line), std::string::npos) << failure.name << ": " << line;
        EXPECT_NE(failure.message.find("; driver log: "), std::string::npos) << failure.name;
        expect_only_its_own_return(failure);
    }
    std::printf("%d of %zu failures carried the driver's log\n", with_log, failures.size());
    EXPECT_GE(with_log, 3);
}

TEST(DriverLogGpu, AnotherThreadsFailureKeepsItsLinesToItself) {
    CUDACORE_REQUIRE_GPU();
    if (!has_error_log()) GTEST_SKIP() << "the driver has no error log (CUDA 12.9 or newer needed)";
    const Device device(0);
    Failure other;
    std::thread thread([&] {
        const Context context = device.set_current();
        other = provoke("pool attribute, other thread", "cuMemPoolSetAttribute",
                        [&] { set_pool_high_watermark(device); });
    });
    thread.join();
    const Context context = device.set_current();
    const Stream stream = device.create_stream();
    const Failure mine = provoke("copy to an invalid device pointer, this thread", "cuMemcpyHtoDAsync", [&] {
        int host[4] = {};
        detail::check(detail::driver().cuMemcpyHtoDAsync(CUdeviceptr{0x10}, host, sizeof host,
                                                         stream.handle()),
                      "cuMemcpyHtoDAsync", "16 bytes to 0x10");
    });
    // The callback ran on the failing thread: the other thread's error has its own lines...
    EXPECT_FALSE(other.driver_log.empty()) << other.message;
    expect_only_its_own_return(other);
    // ...and none of them reached this thread's error.
    EXPECT_FALSE(mine.driver_log.empty()) << mine.message;
    for (const auto& line : mine.driver_log)
        EXPECT_EQ(line.find("cuMemPoolSetAttribute"), std::string::npos) << line;
    expect_only_its_own_return(mine);
}

}  // namespace
