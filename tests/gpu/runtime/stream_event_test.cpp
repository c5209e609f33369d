// Streams and events on a real GPU: ordering, recording later, timing and its error cases.
#include "test_support.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/identity.hpp"
#include "loader/driver_api.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"

#include <atomic>
#include <optional>
#include <chrono>
#include <thread>
#include <unordered_set>

namespace {

using namespace cudacore;
using namespace std::chrono_literals;

// Enqueues a host function that sleeps, then runs `after` (on the driver's callback thread).
struct Sleeper {
    std::chrono::milliseconds duration;
    std::atomic<int>* counter = nullptr;
    int seen_before = -1;
};

void sleep_then_count(void* data) {
    auto* sleeper = static_cast<Sleeper*>(data);
    std::this_thread::sleep_for(sleeper->duration);
    if (sleeper->counter) sleeper->seen_before = sleeper->counter->fetch_add(1);
}

void enqueue_sleep(const Stream& stream, Sleeper& sleeper) {
    ASSERT_EQ(detail::driver().cuLaunchHostFunc(stream.handle(), sleep_then_count, &sleeper),
              CUDA_SUCCESS);
}

TEST(StreamGpu, WaitOnStreamOrdersWork) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream first = device.create_stream();
    Stream second = device.create_stream();
    std::atomic<int> counter{0};
    Sleeper slow{100ms, &counter};
    Sleeper fast{0ms, &counter};
    enqueue_sleep(first, slow);
    second.wait(first);
    enqueue_sleep(second, fast);
    EXPECT_FALSE(second.is_done());
    second.sync();
    EXPECT_EQ(slow.seen_before, 0);  // the slow one ran first despite its 100 ms sleep
    EXPECT_EQ(fast.seen_before, 1);
    EXPECT_TRUE(first.is_done());
}

TEST(StreamGpu, WithoutWaitStreamsRunIndependently) {
    CUDACORE_REQUIRE_GPU();
    // The control for the test above: without wait, the second stream finishes while the first
    // still sleeps. (Only the first stream runs a host function: the driver runs host functions
    // of all streams on one thread.)
    Device device(0);
    Stream first = device.create_stream();
    Stream second = device.create_stream();
    Sleeper slow{200ms};
    enqueue_sleep(first, slow);
    Event marker = second.record();
    second.sync();
    EXPECT_TRUE(marker.is_done());
    EXPECT_FALSE(first.is_done());
    first.sync();
}

TEST(StreamGpu, OptionsAndFromHandle) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream blocking = device.create_stream({.non_blocking = false});
    EXPECT_FALSE(blocking.non_blocking());
    int least = 0, greatest = 0;
    {
        detail::ContextScope scope(*detail::box_of(device.context()));
        detail::driver().cuCtxGetStreamPriorityRange(&least, &greatest);
    }
    Stream high = device.create_stream({.priority = greatest});
    EXPECT_EQ(high.priority(), greatest);
    // Outside the range: an error naming the range (as cuda.core raises), not a clamp.
    for (int outside : {greatest - 1, least + 1, -1000}) {
        try {
            device.create_stream({.priority = outside});
            ADD_FAILURE() << "priority " << outside << " accepted";
        } catch (const InvalidArgumentError& e) {
            const std::string message = e.what();
            EXPECT_NE(message.find("priority " + std::to_string(outside)), std::string::npos)
                << message;
            EXPECT_NE(message.find("range " + std::to_string(greatest) + " (highest) .. " +
                                   std::to_string(least) + " (lowest)"),
                      std::string::npos)
                << message;
        }
    }
    EXPECT_TRUE(high.non_blocking());
    EXPECT_EQ(high.device(), device);

    CUstream raw = nullptr;
    {
        detail::ContextScope scope(*detail::box_of(device.context()));
        ASSERT_EQ(detail::driver().cuStreamCreateWithPriority(&raw, CU_STREAM_NON_BLOCKING, 0), CUDA_SUCCESS);
    }
    {
        Stream wrapped = Stream::from_handle(raw);
        EXPECT_FALSE(wrapped.owns_handle());
        EXPECT_EQ(wrapped.handle(), raw);
        EXPECT_EQ(wrapped.context(), device.context());
        wrapped.record();
        wrapped.sync();
    }
    // Still valid after the wrapper is gone: it never destroyed the caller's stream.
    EXPECT_EQ(detail::driver().cuStreamQuery(raw), CUDA_SUCCESS);
    EXPECT_EQ(detail::driver().cuStreamDestroy(raw), CUDA_SUCCESS);
}

// The driver with cuStreamDestroy counted (and then made): a destroyed stream handle must not be
// queried again, so the test watches the destroy itself.
std::atomic<CUstream> destroyed_stream{nullptr};
const detail::DriverApi* real_driver = nullptr;
CUresult counting_stream_destroy(CUstream stream) {
    destroyed_stream.store(stream);
    return real_driver->cuStreamDestroy(stream);
}

// take_ownership: the stream is cudacore's, destroyed with its last holder; a default stream is
// refused.
TEST(StreamGpu, FromHandleTakingOwnershipDestroysTheStream) {
    CUDACORE_REQUIRE_GPU();
    const Device device(0);
    CUstream raw = nullptr;
    {
        detail::ContextScope scope(*detail::box_of(device.context()));
        ASSERT_EQ(detail::driver().cuStreamCreateWithPriority(&raw, CU_STREAM_NON_BLOCKING, 0), CUDA_SUCCESS);
    }
    real_driver = &detail::driver();
    static detail::DriverApi counting;  // static: a release thread may still read it after the swap back
    counting = *real_driver;
    counting.cuStreamDestroy = counting_stream_destroy;
    detail::loaded_driver.store(&counting);
    {
        Stream taken = Stream::from_handle(raw, {.take_ownership = true});
        EXPECT_TRUE(taken.owns_handle());
        taken.record();
        taken.sync();
    }
    // The release may run on the release thread once the stream's work is done, hence the wait.
    const bool destroyed =
        test::wait_until([&] { return destroyed_stream.load() == raw; }, std::chrono::seconds(10));
    detail::loaded_driver.store(real_driver);
    EXPECT_TRUE(destroyed) << "the taken stream was not destroyed with its last holder";
    try {
        Stream::from_handle(nullptr, {.take_ownership = true});
        ADD_FAILURE() << "a default stream was taken";
    } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("default stream"), std::string::npos) << e.what();
    }
}

TEST(StreamGpu, DefaultStreamWorks) {
    CUDACORE_REQUIRE_GPU();
    Stream stream = Device(0).default_stream();
    EXPECT_FALSE(stream.owns_handle());
    Event event = stream.record({.timing_enabled = true});
    stream.sync();
    EXPECT_TRUE(event.is_done());
}

TEST(EventGpu, CreatedUnrecordedThenRecordedLaterManyTimes) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Event event = device.create_event();
    EXPECT_FALSE(event.is_recorded());
    EXPECT_TRUE(event.is_done());  // an unrecorded event counts as done
    Stream stream = device.create_stream();
    Sleeper slow{50ms};
    enqueue_sleep(stream, slow);
    stream.record(event);
    EXPECT_TRUE(event.is_recorded());
    EXPECT_FALSE(event.is_done());
    event.sync();
    EXPECT_TRUE(event.is_done());
    // Recorded again on another stream; a third stream waits on it.
    Stream other = device.create_stream();
    enqueue_sleep(other, slow);
    other.record(event);
    EXPECT_FALSE(event.is_done());
    Stream waiter = device.create_stream();
    waiter.wait(event);
    waiter.sync();
    EXPECT_TRUE(event.is_done());
}

TEST(EventGpu, ElapsedTimeAroundTwentyMillisecondSleep) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream stream = device.create_stream();
    Event start = device.create_event({.timing_enabled = true});
    Event end = device.create_event({.timing_enabled = true});
    Sleeper sleeper{20ms};
    stream.record(start);
    enqueue_sleep(stream, sleeper);
    stream.record(end);
    end.sync();
    Milliseconds elapsed = end - start;
    // The host sleeps at least 20 ms but may oversleep (a loaded or virtual machine): tight
    // below (event resolution is about half a microsecond), loose above.
    EXPECT_GE(elapsed.count(), 19.9) << elapsed.count() << " ms";
    EXPECT_LT(elapsed.count(), 250.0) << elapsed.count() << " ms";
}

TEST(EventGpu, ScopedTimerMeasuresTheRegion) {
    CUDACORE_REQUIRE_GPU();
    Stream stream = Device(0).create_stream();
    ScopedTimer timer(stream);
    Sleeper sleeper{20ms};
    enqueue_sleep(stream, sleeper);
    timer.stop();
    EXPECT_GE(timer.elapsed().count(), 19.9);  // tight below, loose above (host oversleep)
    EXPECT_LT(timer.elapsed().count(), 250.0);
}

TEST(EventGpu, ElapsedErrorsSayWhichEventAndWhy) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream stream = device.create_stream();
    Event timed_start = device.create_event({.timing_enabled = true});
    Event timed_end = device.create_event({.timing_enabled = true});
    Event untimed = device.create_event();

    auto message_of = [](auto&& call) -> std::string {
        try {
            call();
        } catch (const Error& e) {
            return e.what();
        }
        return "no exception";
    };
    // Never recorded.
    std::string m = message_of([&] { return timed_end - timed_start; });
    EXPECT_NE(m.find("start event"), std::string::npos) << m;
    EXPECT_NE(m.find("never recorded"), std::string::npos) << m;
    stream.record(timed_start);
    m = message_of([&] { return timed_end - timed_start; });
    EXPECT_NE(m.find("end event"), std::string::npos) << m;
    EXPECT_NE(m.find("never recorded"), std::string::npos) << m;
    // Created without timing: the message says which side.
    stream.record(untimed);
    m = message_of([&] { return untimed - timed_start; });
    EXPECT_NE(m.find("end event"), std::string::npos) << m;
    EXPECT_NE(m.find("without timing_enabled"), std::string::npos) << m;
    m = message_of([&] { return timed_start - untimed; });
    EXPECT_NE(m.find("start event"), std::string::npos) << m;
    EXPECT_THROW(untimed - timed_start, InvalidArgumentError);
    // Not completed yet: the end event only (the start event is waited for first; on a GPU
    // shared with other processes its record may still be pending microseconds later).
    timed_start.sync();
    Sleeper slow{100ms};
    enqueue_sleep(stream, slow);
    stream.record(timed_end);
    try {
        (void)(timed_end - timed_start);
        FAIL() << "no exception for an incomplete event";
    } catch (const DriverError& e) {
        EXPECT_EQ(e.status(), CUDA_ERROR_NOT_READY);
        EXPECT_NE(std::string(e.what()).find("the end event"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("has not completed"), std::string::npos) << e.what();
    }
    timed_end.sync();
    EXPECT_GE((timed_end - timed_start).count(), 90.0);
    // IPC events cannot time.
    EXPECT_THROW(device.create_event({.timing_enabled = true, .ipc_enabled = true}),
                 InvalidArgumentError);
    Event ipc = device.create_event({.ipc_enabled = true});
    EXPECT_TRUE(ipc.options().ipc_enabled);
}

TEST(EventGpu, EventKeepsContextAlive) {
    CUDACORE_REQUIRE_GPU();
    Event event = Device(0).create_event({.timing_enabled = true});
    Stream stream = Device(0).create_stream();
    // Only the event and the stream hold the primary context now; it must stay usable.
    stream.record(event);
    event.sync();
    EXPECT_NE(event.context().handle(), nullptr);
    EXPECT_EQ(event.device().ordinal(), 0);
}

}  // namespace

namespace {

// Events of a primary context are reused when known complete (event.hpp): a dropped event that
// has no work left is kept by its context, and the next event of the same kind takes it and
// behaves as a new one. Handles are read from the box: handle() itself marks an event as given
// out, which is never kept.
int kept_events(const Stream& stream, const EventOptions& options) {
    return detail::box_of(stream)->context->recycled_events.kept(detail::EventRecycler::kind_of(options));
}
CUevent driver_event(const Event& event) { return detail::box_of(event)->handle; }

TEST(EventGpu, ASynchronizedDroppedEventIsReusedAsANewOneOfTheSameKind) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream stream = device.create_stream();  // holds the context, so its kept events stay
    const EventOptions timed{.timing_enabled = true};
    int kept_before = 0;
    CUevent dropped = nullptr;
    {
        Event event = device.create_event(timed);  // may itself be a kept one
        kept_before = kept_events(stream, timed);
        stream.record(event);
        event.sync();
        dropped = driver_event(event);
    }
    EXPECT_EQ(kept_events(stream, timed), kept_before + 1);
    // Another kind does not take it.
    Event untimed = device.create_event();
    EXPECT_NE(driver_event(untimed), dropped);
    EXPECT_EQ(kept_events(stream, timed), kept_before + 1);
    Event reused = device.create_event(timed);
    EXPECT_EQ(driver_event(reused), dropped);
    EXPECT_EQ(kept_events(stream, timed), kept_before);
    // As a new event: not recorded (so no elapsed time yet), done, and usable for timing.
    EXPECT_FALSE(reused.is_recorded());
    EXPECT_TRUE(reused.is_done());
    Event end = device.create_event(timed);
    EXPECT_THROW((void)(end - reused), InvalidArgumentError);
    stream.record(reused);
    stream.record(end);
    end.sync();
    EXPECT_GE((end - reused).count(), 0.0);
}

TEST(EventGpu, NeverRecordedAndTimedEventsAreKeptWhenDropped) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream stream = device.create_stream();
    const EventOptions untimed{};
    {
        Event event = device.create_event(untimed);
        const int kept_before = kept_events(stream, untimed);
        { Event copy = event; }  // a copy going is not the last
        EXPECT_EQ(kept_events(stream, untimed), kept_before);
        event = device.create_event({.blocking_sync = true});  // the never-recorded one goes
        EXPECT_EQ(kept_events(stream, untimed), kept_before + 1);
    }
    // An elapsed time says both events completed.
    const EventOptions timed{.timing_enabled = true};
    std::optional<Event> start = device.create_event(timed);
    std::optional<Event> end = device.create_event(timed);
    const int kept_before = kept_events(stream, timed);
    stream.record(*start);
    stream.record(*end);
    stream.sync();  // completes them, but the events cannot know it
    EXPECT_GE((*end - *start).count(), 0.0);
    start.reset();
    end.reset();
    EXPECT_EQ(kept_events(stream, timed), kept_before + 2);
}

TEST(EventGpu, EventsOfUnknownCompletionOrGivenOutHandlesAreDestroyedNotKept) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream stream = device.create_stream();
    const EventOptions blocking{.blocking_sync = true};
    int kept_before = 0;
    Sleeper slow{100ms};
    {
        Event event = device.create_event(blocking);
        kept_before = kept_events(stream, blocking);
        enqueue_sleep(stream, slow);
        stream.record(event);
        ASSERT_FALSE(event.is_done());
    }  // dropped with its record still ahead of it
    EXPECT_EQ(kept_events(stream, blocking), kept_before);
    stream.sync();
    {
        Event event = device.create_event(blocking);
        kept_before = kept_events(stream, blocking);
        stream.record(event);
        stream.sync();  // complete, but only the stream was synchronized
    }
    EXPECT_EQ(kept_events(stream, blocking), kept_before);
    {
        Event event = device.create_event(blocking);
        kept_before = kept_events(stream, blocking);
        stream.record(event);
        event.sync();
        stream.record(event);  // recorded again after the sync: unknown again
    }
    EXPECT_EQ(kept_events(stream, blocking), kept_before);
    stream.sync();
    {
        Event event = device.create_event(blocking);
        kept_before = kept_events(stream, blocking);
        (void)event.handle();  // given out: whatever the caller did with it is unknown
    }
    EXPECT_EQ(kept_events(stream, blocking), kept_before);
    // Once found done after its last record, a dropped one is kept.
    {
        Event event = device.create_event(blocking);
        kept_before = kept_events(stream, blocking);
        stream.record(event);
        while (!event.is_done()) std::this_thread::yield();
    }
    EXPECT_EQ(kept_events(stream, blocking), kept_before + 1);
}

// Comparing and hashing read the boxes: they give the caller no handle, so they do not keep an
// event from reuse.
TEST(EventGpu, ComparedAndHashedEventsAreStillKeptWhenDropped) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream stream = device.create_stream();
    const EventOptions untimed{};
    int kept_before = 0;
    {
        Event event = device.create_event(untimed);
        Event other = device.create_event(untimed);
        kept_before = kept_events(stream, untimed);
        EXPECT_FALSE(event == other);
        EXPECT_TRUE(event == Event(event));
        const std::unordered_set<Event> events{event, other, event};
        EXPECT_EQ(events.size(), 2u);
        EXPECT_EQ(std::hash<Event>{}(event), std::hash<const void*>{}(driver_event(event)));
    }
    EXPECT_EQ(kept_events(stream, untimed), kept_before + 2);
}

// The caller's own driver calls on handle() leave an Event that behaves as one: a record made
// through the handle is waited for and queried like cudacore's own.
TEST(EventGpu, AnEventRecordedThroughItsHandleIsWaitedForAndQueried) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream stream = device.create_stream();
    const EventOptions blocking{.blocking_sync = true};
    int kept_before = 0;
    std::atomic<int> counter{0};
    Sleeper slow{100ms, &counter};
    {
        Event event = device.create_event(blocking);
        kept_before = kept_events(stream, blocking);
        enqueue_sleep(stream, slow);
        ASSERT_EQ(detail::driver().cuEventRecord(event.handle(), stream.handle()), CUDA_SUCCESS);
        EXPECT_FALSE(event.is_done());
        event.sync();
        EXPECT_EQ(counter.load(), 1) << "sync() waited for the work before the caller's record";
        EXPECT_TRUE(event.is_done());
    }
    // Given out, it is destroyed rather than kept (a record it made may not be known).
    EXPECT_EQ(kept_events(stream, blocking), kept_before);
}

TEST(EventGpu, InterprocessEventsAreNeverKept) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream stream = device.create_stream();
    EXPECT_EQ(detail::EventRecycler::kind_of({.ipc_enabled = true}), -1);
    int kept_before[4];
    for (int kind = 0; kind < 4; ++kind)
        kept_before[kind] = detail::box_of(stream)->context->recycled_events.kept(kind);
    { Event event = device.create_event({.ipc_enabled = true}); }
    for (int kind = 0; kind < 4; ++kind)
        EXPECT_EQ(detail::box_of(stream)->context->recycled_events.kept(kind), kept_before[kind]) << kind;
}

}  // namespace
