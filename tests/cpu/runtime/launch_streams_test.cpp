// LaunchStreams (which streams a library or executable graph ran on) and the capture handshake
// that deferred releases use (run_outside_captures): pure bookkeeping, no driver needed.
#include "runtime/release/capture_registry.hpp"
#include "runtime/release/launch_streams.hpp"
#include "loader/driver_api.hpp"
#include "runtime/release/reset_tolerance.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

using namespace cudacore::detail;

namespace {

// A box that names no real stream: never destroyed through the driver.
std::shared_ptr<StreamBox> fake_stream() {
    auto box = std::make_shared<StreamBox>();
    box->owned = false;
    return box;
}

}  // namespace

TEST(LaunchStreams, EachStreamIsKeptOnceAndHeldUntilTaken) {
    LaunchStreams launches;
    EXPECT_FALSE(launches.any());
    auto first = fake_stream();
    auto second = fake_stream();
    std::weak_ptr<StreamBox> watch = first;
    for (int i = 0; i < 100; ++i) {
        launches.note(first);
        launches.note(second);
    }
    EXPECT_TRUE(launches.any());
    first.reset();
    EXPECT_FALSE(watch.expired()) << "a noted stream must be held: its work may still run";
    EXPECT_EQ(launches.noted().size(), 2u);  // a look that keeps them noted
    EXPECT_TRUE(launches.any());
    const auto taken = launches.take();
    ASSERT_EQ(taken.size(), 2u);
    EXPECT_EQ(taken[0], watch.lock());
    EXPECT_EQ(taken[1], second);
    EXPECT_FALSE(launches.any());
    EXPECT_TRUE(launches.take().empty());
}

TEST(LaunchStreams, MoreStreamsThanSlotsAreAllKept) {
    LaunchStreams launches;
    std::vector<std::shared_ptr<StreamBox>> streams;
    for (int i = 0; i < 40; ++i) streams.push_back(fake_stream());
    for (int round = 0; round < 3; ++round)
        for (const auto& stream : streams) launches.note(stream);
    const auto taken = launches.take();
    EXPECT_EQ(taken, streams);
    // Noted again after take(): starts afresh.
    launches.note(streams[5]);
    EXPECT_EQ(launches.take(), std::vector<std::shared_ptr<StreamBox>>{streams[5]});
}

TEST(LaunchStreams, ConcurrentNotesKeepEveryStreamOnce) {
    LaunchStreams launches;
    std::vector<std::shared_ptr<StreamBox>> streams;
    for (int i = 0; i < 24; ++i) streams.push_back(fake_stream());
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            for (int round = 0; round < 200; ++round)
                for (std::size_t i = 0; i < streams.size(); ++i)
                    launches.note(streams[(i + t * 5) % streams.size()]);
        });
    for (auto& thread : threads) thread.join();
    auto taken = launches.take();
    EXPECT_EQ(taken.size(), streams.size());
    std::sort(taken.begin(), taken.end());
    EXPECT_EQ(std::adjacent_find(taken.begin(), taken.end()), taken.end());
}

// What an unload or a context-wide wait must not do during a capture begun through cudacore:
// run_outside_captures waits until none is registered, and gives up when told.
TEST(RunOutsideCaptures, WaitsForCapturesToEndAndGivesUpWhenTold) {
    std::atomic<bool> ran{false};
    active_capture_streams.fetch_add(1);  // as while a capture is registered
    std::thread runner([&] {
        const bool done = run_outside_captures([&] { ran = true; }, [](void*) { return false; },
                                               nullptr);
        EXPECT_TRUE(done);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    EXPECT_FALSE(ran.load()) << "ran during a capture";
    active_capture_streams.fetch_sub(1);
    runner.join();
    EXPECT_TRUE(ran.load());

    active_capture_streams.fetch_add(1);
    bool ran_again = false;
    int asked = 0;
    auto give_up_after_three = [](void* count) { return ++*static_cast<int*>(count) >= 3; };
    EXPECT_FALSE(run_outside_captures([&] { ran_again = true; }, give_up_after_three, &asked));
    EXPECT_FALSE(ran_again);
    EXPECT_EQ(asked, 3);
    active_capture_streams.fetch_sub(1);
}

// A capture registers (before it begins) only while no such action runs: a registration
// attempted during one waits for it to end.
TEST(RunOutsideCaptures, CapturesDoNotRegisterWhileAnActionRuns) {
    std::atomic<bool> in_action{false};
    std::atomic<bool> registered_during_action{false};
    std::thread runner([&] {
        run_outside_captures(
            [&] {
                in_action = true;
                std::this_thread::sleep_for(std::chrono::milliseconds(30));
                in_action = false;
            },
            [](void*) { return false; }, nullptr);
    });
    while (!in_action.load()) std::this_thread::yield();
    GraphHoldings holdings;
    int fake_stream = 0;
    const auto stream = reinterpret_cast<CUstream>(&fake_stream);
    EXPECT_TRUE(register_capture_stream(stream, 0, holdings));
    registered_during_action = in_action.load();
    EXPECT_TRUE(captures_active());
    unregister_capture_stream(stream);
    runner.join();
    EXPECT_FALSE(registered_during_action.load());
}

namespace {

// A stand-in driver for pruning: streams whose handle is in `busy` still have work queued;
// destroyed streams are counted. Installed as the loaded driver for the test's scope.
std::vector<CUstream> busy;
int streams_destroyed = 0;

CUresult stand_in_stream_query(CUstream stream) {
    return std::find(busy.begin(), busy.end(), stream) != busy.end() ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
}
CUresult stand_in_stream_destroy(CUstream) {
    ++streams_destroyed;
    return CUDA_SUCCESS;
}
CUresult stand_in_ctx_get_id(CUcontext, unsigned long long* id) {
    *id = 7;
    return CUDA_SUCCESS;
}

class StandInDriver {
public:
    StandInDriver() {
        api_.cuStreamQuery = stand_in_stream_query;
        api_.cuStreamDestroy = stand_in_stream_destroy;
        api_.cuCtxGetId = stand_in_ctx_get_id;
        previous_ = loaded_driver.exchange(&api_, std::memory_order_acq_rel);
    }
    ~StandInDriver() { loaded_driver.store(previous_, std::memory_order_release); }
    StandInDriver(const StandInDriver&) = delete;
    StandInDriver& operator=(const StandInDriver&) = delete;
    const DriverApi& api() const { return api_; }

private:
    DriverApi api_;
    const DriverApi* previous_ = nullptr;
};

}  // namespace

TEST(LaunchStreams, StreamsNobodyHoldsWhoseWorkIsDoneAreLetGoAsMoreArrive) {
    StandInDriver driver;
    auto context = std::make_shared<ContextBox>();
    context->retained = false;
    context->handle = reinterpret_cast<CUcontext>(0x1000);
    ASSERT_EQ(note_context_id(*context, driver.api()), CUDA_SUCCESS);
    auto stream_at = [&](std::uintptr_t n) {
        auto box = std::make_shared<StreamBox>();
        box->handle = reinterpret_cast<CUstream>(0x10000 + n);
        box->context = context;
        return box;
    };
    busy.clear();
    streams_destroyed = 0;
    LaunchStreams launches;
    std::vector<std::weak_ptr<StreamBox>> watched;
    std::vector<std::shared_ptr<StreamBox>> still_wrapped;  // a wrapper of the user's is left
    constexpr int kStreams = 400;
    for (int i = 0; i < kStreams; ++i) {
        auto box = stream_at(static_cast<std::uintptr_t>(i));
        if (i % 10 == 3) busy.push_back(box->handle);     // its work is still running
        if (i % 50 == 7) still_wrapped.push_back(box);
        launches.note(box);
        watched.push_back(box);
    }
    const std::size_t held = launches.noted().size();
    // The first 16 (the lock-free slots), every busy one and every wrapped one stay held...
    for (int i = 0; i < kStreams; ++i) {
        const bool must_stay = i < 16 || i % 10 == 3 || i % 50 == 7;
        if (must_stay) EXPECT_FALSE(watched[i].expired()) << "stream " << i;
    }
    // ...and the others were let go (destroyed) in bulk, so that the count stays bounded.
    EXPECT_GT(streams_destroyed, kStreams / 2);
    EXPECT_LT(held, 200u);
    EXPECT_EQ(held + static_cast<std::size_t>(streams_destroyed), static_cast<std::size_t>(kStreams));
    // A stream let go is noted afresh when launched on again.
    busy.clear();
    still_wrapped.clear();
    launches.take();  // every remaining box goes (destroyed: nothing holds them now)
    EXPECT_EQ(streams_destroyed, kStreams);
}
