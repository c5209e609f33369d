// Lifetime at exit and in odd orders: each scenario runs in a child process that must exit 0 and
// print nothing on stderr.
#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/program.hpp"
#include "cudacore/stream.hpp"
#include "loader/driver_api.hpp"
#include "runtime/release/release.hpp"
#include "runtime/library_box.hpp"
#include "cudacore/kernel.hpp"
#include "support/box_access.hpp"
#include "runtime/runtime_handles.hpp"
#include "test_support.hpp"

#include <chrono>
#include <memory>
#include <memory>
#include <optional>
#include <vector>
#include <vector>
#include <thread>

namespace {

using namespace cudacore;
using namespace std::chrono_literals;

using cudacore::test::helper_path;
using cudacore::test::run_process;

void expect_clean_exit(const std::string& scenario) {
    auto result = run_process({helper_path("lifetime_scenarios").string(), scenario});
    EXPECT_EQ(result.exit_code, 0) << scenario << "\nstdout:\n" << result.out << "\nstderr:\n" << result.err;
    EXPECT_EQ(result.err, "") << scenario;
    EXPECT_NE(result.out.find("scenario " + scenario + " done"), std::string::npos) << result.out;
}

TEST(LifetimeGpu, StaticObjectsExitCleanly) {
    CUDACORE_REQUIRE_GPU();
    expect_clean_exit("static");
}

TEST(LifetimeGpu, ReverseOrderDestruction) {
    CUDACORE_REQUIRE_GPU();
    expect_clean_exit("reverse");
}

TEST(LifetimeGpu, RandomOrderDestruction) {
    CUDACORE_REQUIRE_GPU();
    expect_clean_exit("random");
}

TEST(LifetimeGpu, DestroyAfterDeviceResetBySomeoneElse) {
    CUDACORE_REQUIRE_GPU();
    expect_clean_exit("reset");
}

// Events the context kept for reuse die with it: events made after the reset are fresh ones.
TEST(LifetimeGpu, KeptEventsAreNotHandedOutAfterADeviceResetBySomeoneElse) {
    CUDACORE_REQUIRE_GPU();
    expect_clean_exit("reset-kept-events");
}

TEST(LifetimeGpu, ObjectsOutliveMainThroughQuickExitPaths) {
    CUDACORE_REQUIRE_GPU();
    expect_clean_exit("exit");
}

// A launched ObjectCode and Kernel held in statics, one destroyed inside exit() while the
// deferred-unload thread still runs, one after it stopped.
TEST(LifetimeGpu, LaunchedKernelsHeldInStaticsExitCleanly) {
    CUDACORE_REQUIRE_GPU();
    expect_clean_exit("static-kernel");
}

// std::exit while a kernel runs whose code's last handles were just dropped: the release waiting
// for the kernel stops at exit and leaves the library to the driver, rather than unloading it
// under the kernel (or holding exit until the kernel ends).
TEST(LifetimeGpu, ExitWhileAKernelRunsWaitsForTheUnloadInProgress) {
    CUDACORE_REQUIRE_GPU();
    const std::string scenario = "exit-while-kernel-runs";
    auto result = run_process({helper_path("lifetime_scenarios").string(), scenario});
    EXPECT_EQ(result.exit_code, 0) << "stdout:\n" << result.out << "\nstderr:\n" << result.err;
    EXPECT_EQ(result.err, "");
    EXPECT_NE(result.out.find("scenario " + scenario + " done"), std::string::npos) << result.out;
    // The kernel was still running when exit() began; the release that waited for it was
    // stopped: one load, no unload (the driver frees the library at exit).
    EXPECT_NE(result.out.find("kernel running: yes"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("at exit: 1 loads, 0 unloads"), std::string::npos) << result.out;
}

// cuda.core's PyTorch example ported to C++ (tests/helpers/adopted_stream_teardown.cpp): a
// framework's stream adopted with from_handle, its pool, DLPack round trips, two name
// expressions, everything dropped in reverse order. It used to crash now and then on the
// release thread, which waited for the adopted stream's whole context while the framework tore
// its stream and pool down. Many runs, each its own process (output to a pipe), and one process
// that runs the whole program many times.
TEST(LifetimeGpu, AdoptedFrameworkStreamTeardownNeverCrashes) {
    CUDACORE_REQUIRE_GPU();
    const std::string helper = helper_path("adopted_stream_teardown").string();
    for (int run = 0; run < 20; ++run) {
        auto result = run_process({helper});
        ASSERT_EQ(result.exit_code, 0) << "run " << run << "\nstdout:\n" << result.out
                                       << "\nstderr:\n" << result.err;
        EXPECT_EQ(result.out, "ok\n");
        EXPECT_EQ(result.err, "");
    }
    auto result = run_process({helper, "25"});
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_EQ(result.out, "ok\n");
}

constexpr const char* kSpinSource = R"(
extern "C" __global__ void spin(unsigned long long cycles, int* done) {
    long long start = clock64();
    while (clock64() - start < (long long)cycles) {}
    *done = 1;
}
)";

// A library whose kernel runs on a stream the caller owns, released after the caller dropped
// the wrapper and destroyed the stream: the release waits for the event that the last wrapper
// recorded (the kernel), not for the destroyed handle, and then unloads.
TEST(LifetimeGpu, LibraryReleasedAfterTheCallerDestroyedItsAdoptedStreamWaitsForItsKernel) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    device.set_current();
    detail::wait_for_deferred_releases();
    const auto& api = detail::driver();
    CUstream raw = nullptr;
    ASSERT_EQ(api.cuStreamCreateWithPriority(&raw, CU_STREAM_NON_BLOCKING, 0), CUDA_SUCCESS);
    ProgramOptions options;
    options.arch = device.arch();
    std::optional<ObjectCode> code;
    code.emplace(Program(kSpinSource, SourceType::cxx, options).compile(CodeType::cubin));
    Buffer done = device.allocate(sizeof(int), device.create_stream());
    done.fill_byte(0, device.default_stream());
    device.sync();
    {
        Stream adopted = Stream::from_handle(raw);
        Stream copy = adopted;  // the last of the two copies records the end of the work
        // About 0.3 s on a 2 GHz clock: still running when everything below is released.
        launch(adopted, LaunchConfig{.grid = 1, .block = 1}, code->get_kernel("spin"),
               600'000'000ull, static_cast<int*>(done.data()));
    }
    ASSERT_EQ(api.cuStreamDestroy(raw), CUDA_SUCCESS);  // the caller's stream is gone
    const auto unloads_before = detail::library_unload_count();
    code.reset();  // queued behind the kernel
    std::this_thread::sleep_for(50ms);
    Stream reader = device.create_stream();  // non-blocking: reads while the kernel runs
    int finished = -1;
    done.copy_to(&finished, sizeof finished, reader);
    reader.sync();
    if (finished == 0) {
        EXPECT_EQ(detail::library_unload_count(), unloads_before) << "unloaded under a running kernel";
    }
    detail::wait_for_deferred_releases();
    EXPECT_EQ(detail::library_unload_count(), unloads_before + 1);
    int after = -1;
    done.copy_to(&after, sizeof after, reader);
    reader.sync();
    EXPECT_EQ(after, 1) << "the release ran before the kernel finished";
}

// The same library released while a wrapper still lives: the event is recorded then.
TEST(LifetimeGpu, LibraryReleasedWhileItsAdoptedStreamIsWrappedWaitsForItsKernel) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    device.set_current();
    detail::wait_for_deferred_releases();
    Stream owner = device.create_stream();
    ProgramOptions options;
    options.arch = device.arch();
    std::optional<ObjectCode> code;
    code.emplace(Program(kSpinSource, SourceType::cxx, options).compile(CodeType::cubin));
    Buffer done = device.allocate(sizeof(int), owner);
    done.fill_byte(0, owner);
    Stream adopted = Stream::from_handle(owner.handle());
    launch(adopted, LaunchConfig{.grid = 1, .block = 1}, code->get_kernel("spin"),
           600'000'000ull, static_cast<int*>(done.data()));
    const auto unloads_before = detail::library_unload_count();
    code.reset();
    detail::wait_for_deferred_releases();
    EXPECT_EQ(detail::library_unload_count(), unloads_before + 1);
    EXPECT_TRUE(owner.is_done()) << "the release ran before the kernel finished";
}

// The torture program (tests/helpers/teardown_torture.cpp) for a few seeds; scripts/gpu-check.sh
// torture runs thousands.
constexpr const char* kPerRequestSource = R"(
extern "C" __global__ void add_one(int* out) { atomicAdd(out, 1); }
)";

// A server that launches one library's kernels on a new stream per request: the library must not
// hold every stream it ever ran on until it is released. Streams nobody holds whose work is done
// are let go as new ones arrive, every kernel still runs, and the library is still released
// after its last launch. (That a stream with work still queued stays held is shown against a
// stand-in driver in tests/cpu/runtime/launch_streams_test.cpp: on a GPU, a kernel kept running
// on purpose also holds back streams that share its hardware queue.)
TEST(LifetimeGpu, ALibraryLetsGoOfFinishedStreamsNobodyHolds) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    device.set_current();
    detail::wait_for_deferred_releases();
    ProgramOptions options;
    options.arch = device.arch();
    std::optional<ObjectCode> code;
    code.emplace(Program(kPerRequestSource, SourceType::cxx, options).compile(CodeType::cubin));
    Stream setup = device.create_stream();
    Buffer counter = device.allocate(sizeof(int), setup);
    counter.fill_byte(0, setup);
    setup.sync();
    constexpr int kRequests = 400;
    std::vector<std::weak_ptr<detail::StreamBox>> streams;
    for (int i = 0; i < kRequests; ++i) {
        Stream stream = device.create_stream();
        launch(stream, LaunchConfig{.grid = 1, .block = 1}, code->get_kernel("add_one"),
               static_cast<int*>(counter.data()));
        stream.sync();
        streams.push_back(detail::box_of(stream));
    }
    int gone = 0;
    for (const auto& stream : streams) gone += stream.expired() ? 1 : 0;
    // The first 16 stay (compared without a lock until the release); of the others, all but those
    // since the last prune (the count doubles between prunes, from 64) are gone.
    EXPECT_GE(gone, kRequests / 2) << "finished streams nobody holds must be let go";
    EXPECT_LE(gone, kRequests - 16);
    int total = 0;
    counter.copy_to(&total, sizeof total, setup);
    setup.sync();
    EXPECT_EQ(total, kRequests);
    // No Kernel is left: the library goes with the code, and the streams it still held with it.
    const auto unloads_before = detail::library_unload_count();
    code.reset();
    detail::wait_for_deferred_releases();
    EXPECT_EQ(detail::library_unload_count(), unloads_before + 1);
    int left = 0;
    for (const auto& stream : streams) left += stream.expired() ? 0 : 1;
    EXPECT_EQ(left, 0);
}

TEST(LifetimeGpu, TeardownTortureSeeds) {
    CUDACORE_REQUIRE_GPU();
    for (int seed = 1; seed <= 10; ++seed) {
        auto result = run_process({helper_path("teardown_torture").string(), std::to_string(seed)});
        EXPECT_EQ(result.exit_code, 0) << "seed " << seed << "\n" << result.out << result.err;
        EXPECT_EQ(result.err, "") << "seed " << seed;
    }
}

}  // namespace
