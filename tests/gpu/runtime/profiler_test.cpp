// CUDA profiler control on a real GPU (profiler.hpp): start and stop for the current context, a
// created context and each device's primary context, with the calling thread's current context
// left as it was; a scope that holds its context and stops once; the refusals. Without a
// profiling tool the driver does nothing and answers success, which is what runs here; under
// `nsys profile --capture-range=cudaProfilerApi` the same calls bound the capture.
#include "kernel_sources.hpp"
#include "test_support.hpp"

#include "cudacore/context.hpp"
#include "cudacore/current_context_scope.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/kernel.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/profiler.hpp"
#include "cudacore/program.hpp"
#include "loader/driver_api.hpp"

#include <optional>
#include <string>
#include <thread>

namespace {

using namespace cudacore;

CUcontext raw_current() {
    CUcontext current = nullptr;
    EXPECT_EQ(detail::driver().cuCtxGetCurrent(&current), CUDA_SUCCESS);
    return current;
}

TEST(ProfilerGpu, StartAndStopLeaveTheCurrentContextAsItWas) {
    CUDACORE_REQUIRE_GPU();
    ASSERT_NE(detail::driver().cuProfilerStart, nullptr) << "the driver's table has no cuProfilerStart";
    ASSERT_NE(detail::driver().cuProfilerStop, nullptr);
    // On a thread with no context current: device 0's primary context, and none current after.
    std::thread([] {
        EXPECT_EQ(raw_current(), nullptr);
        profiler::start();
        profiler::stop();
        EXPECT_EQ(raw_current(), nullptr);
        {
            const profiler::Scope scope;
            EXPECT_EQ(scope.context().handle(), Device(0).context().handle());
            EXPECT_EQ(raw_current(), nullptr);
        }
        EXPECT_EQ(raw_current(), nullptr);
    }).join();
    // A created context while the primary context is current: the primary stays current.
    const Context mine = Context::create(Device(0));
    const CurrentContextScope primary(Device(0).context());
    profiler::start(mine);
    EXPECT_EQ(raw_current(), Device(0).context().handle());
    profiler::start(mine);  // twice: nothing more
    profiler::stop(mine);
    profiler::stop(mine);   // nothing started: nothing to do
    EXPECT_EQ(raw_current(), Device(0).context().handle());
    // Without an argument: the current context.
    {
        const CurrentContextScope on(mine);
        const profiler::Scope scope;
        EXPECT_EQ(scope.context().handle(), mine.handle());
    }
}

// Each device's primary context: one scope per device (two on a two-GPU host), with work
// recorded in each.
TEST(ProfilerGpu, EachDevicesPrimaryContextIsRecordedAroundItsWork) {
    CUDACORE_REQUIRE_GPU();
    for (int ordinal = 0; ordinal < Device::count(); ++ordinal) {
        SCOPED_TRACE("device " + std::to_string(ordinal));
        const Device device(ordinal);
        const CUcontext before = raw_current();
        {
            const profiler::Scope scope(device);
            EXPECT_EQ(scope.context().handle(), device.context().handle());
            EXPECT_EQ(raw_current(), before);
            if (ordinal == 0) {
                ProgramOptions options;
                options.name = "profiler_test";
                options.arch = device.arch();
                const ObjectCode code =
                    Program(test::kSaxpySource, SourceType::cxx, options).compile(CodeType::cubin);
                EXPECT_EQ(test::saxpy_mismatches(code.get_kernel("saxpy"), 1 << 16), 0u);
            }
        }
        profiler::start(device);
        profiler::stop(device);
        EXPECT_EQ(raw_current(), before);
    }
}

// A scope holds its context: a created context lives while the scope does, and stop() ends the
// scope once (the destructor then does nothing).
TEST(ProfilerGpu, AScopeHoldsItsContextAndStopsOnce) {
    CUDACORE_REQUIRE_GPU();
    std::optional<profiler::Scope> scope;
    {
        const Context mine = Context::create(Device(0));
        scope.emplace(mine);
    }
    EXPECT_FALSE(scope->context().is_closed());
    EXPECT_NE(scope->context().handle(), nullptr);
    scope->stop();
    scope->stop();  // once only
    scope.reset();
}

TEST(ProfilerGpu, AClosedContextIsRefusedNamingTheCall) {
    CUDACORE_REQUIRE_GPU();
    Context mine = Context::create(Device(0));
    mine.close();
    test::expect_invalid([&] { profiler::start(mine); }, {"profiler::start", "closed"});
    test::expect_invalid([&] { profiler::stop(mine); }, {"profiler::stop", "closed"});
    test::expect_invalid([&] { const profiler::Scope scope(mine); }, {"profiler::start"});
}

}  // namespace
