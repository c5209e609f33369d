// close() on Event and ObjectCode on a real GPU: the release happens (an event goes back to its
// context's recycler or is destroyed; a library is unloaded once no kernel of it is held),
// later calls name the call and the closed object, copies are closed with it (Event) or keep
// working (ObjectCode, a value), reset() drops one share, closing twice is harmless.
#include "test_support.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/event.hpp"
#include "cudacore/kernel.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/memory_program_cache.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/program.hpp"
#include "kernel_sources.hpp"
#include "loader/driver_api.hpp"
#include "runtime/release/release.hpp"
#include "runtime/library_box.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"

#include <optional>
#include <string>
#include <vector>

namespace {

using namespace cudacore;

using cudacore::test::expect_invalid;

int kept_events(const Stream& stream, const EventOptions& options) {
    return detail::box_of(stream)->context->recycled_events.kept(detail::EventRecycler::kind_of(options));
}

TEST(EventCloseGpu, TheLastShareGoesBackToTheRecyclerAndLaterCallsRefuse) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream stream = device.create_stream();
    const EventOptions options{};
    Event event = device.create_event(options);  // never recorded: complete, so reusable
    const int kept_before = kept_events(stream, options);
    event.close();
    EXPECT_TRUE(event.is_closed());
    EXPECT_EQ(event.handle(), nullptr);
    EXPECT_FALSE(event.is_recorded());
    EXPECT_EQ(kept_events(stream, options), kept_before + 1);  // the recycler's path, as at destruction

    expect_invalid([&] { event.sync(); }, {"Event::sync: event 0x", "on device 0 is closed (Event::close was called"});
    expect_invalid([&] { event.is_done(); }, {"Event::is_done"});
    expect_invalid([&] { event.context(); }, {"Event::context"});
    expect_invalid([&] { stream.record(event); }, {"Stream::record: event"});
    expect_invalid([&] { stream.wait(event); }, {"Stream::wait: event"});
    Event timed = stream.record(EventOptions{.timing_enabled = true});
    expect_invalid([&] { (void)(timed - event); }, {"elapsed time: event"});
    event.close();  // nothing more
    EXPECT_EQ(kept_events(stream, options), kept_before + 1);
}

TEST(EventCloseGpu, CopiesAreClosedWithItAndResetDropsOneShare) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream stream = device.create_stream();
    Event event = stream.record();
    std::optional<Event> copy = event;
    event.close();
    EXPECT_TRUE(copy->is_closed());
    EXPECT_EQ(copy->handle(), nullptr);
    expect_invalid([&] { copy->sync(); }, {"Event::sync: event 0x", "is closed (Event::close was called on it or on a copy)"});
    copy->close();  // nothing more

    // reset() drops one share: the other copy keeps working on the same event until it goes.
    Event kept = stream.record();
    const CUevent raw = detail::box_of(kept)->handle;
    Event other = kept;
    kept.reset();
    EXPECT_FALSE(kept.is_closed());
    expect_invalid([&] { kept.sync(); }, {"Event::sync", "is empty (moved from or reset"});
    ASSERT_FALSE(other.is_closed());
    other.sync();
    EXPECT_TRUE(other.is_done());
    EXPECT_EQ(detail::box_of(other)->handle, raw);
    stream.wait(other);
    stream.sync();
    // Closing the last holder releases the event: complete, it goes back to the recycler.
    const int kept_before = kept_events(stream, EventOptions{});
    other.close();
    EXPECT_EQ(kept_events(stream, EventOptions{}), kept_before + 1);
}

ObjectCode compile_saxpy() {
    ProgramOptions options;
    options.name = "close_test";
    options.arch = Device(0).arch();
    return Program(test::kSaxpySource, SourceType::cxx, options).compile(CodeType::cubin);
}

unsigned kernel_count(CUlibrary library) {
    unsigned count = 0;
    EXPECT_EQ(detail::driver().cuLibraryGetKernelCount(&count, library), CUDA_SUCCESS);
    return count;
}

TEST(ObjectCodeCloseGpu, TheLibraryUnloadsOnceNoKernelOfItIsHeld) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    device.set_current();
    Stream stream = device.create_stream();
    ObjectCode code = compile_saxpy();
    std::optional<Kernel> kernel = code.get_kernel("saxpy");
    const CUlibrary library = code.library_handle();
    ObjectCode copy = code;
    detail::wait_for_deferred_releases();  // earlier tests' libraries leave first
    const auto unloads_before = detail::library_unload_count();
    code.close();
    // Every copy is closed with it; the kernel taken before holds the library and keeps working.
    for (const ObjectCode* closed : {&code, &copy}) {
        EXPECT_TRUE(closed->is_closed());
        EXPECT_FALSE(closed->is_loaded());
        expect_invalid([&] { closed->get_kernel("saxpy"); }, {"ObjectCode::get_kernel: cubin 'close_test' is closed"});
    }
    copy.close();  // nothing more
    EXPECT_EQ(detail::library_unload_count(), unloads_before);
    EXPECT_EQ(kernel_count(library), 1u);
    const std::size_t n = 256;
    std::vector<float> x(n, 1.0f), y(n, 2.0f);
    Buffer dx = device.allocate(n * sizeof(float), stream);
    Buffer dy = device.allocate(n * sizeof(float), stream);
    dx.copy_from(x, stream);
    dy.copy_from(y, stream);
    launch(stream, LaunchConfig{.grid = 1, .block = 256}, *kernel, 3.0f,
           static_cast<const float*>(dx.data()), static_cast<float*>(dy.data()), n);
    dy.copy_to(y, stream);
    stream.sync();
    EXPECT_EQ(y[0], 5.0f);
    EXPECT_EQ(y[n - 1], 5.0f);
    // The last holder goes: the library is unloaded (after its launches, on the release worker).
    kernel.reset();
    detail::wait_for_deferred_releases();
    EXPECT_EQ(detail::library_unload_count(), unloads_before + 1);
}

TEST(ObjectCodeCloseGpu, ClosingTheOnlyHolderUnloadsAtOnce) {
    CUDACORE_REQUIRE_GPU();
    Device(0).set_current();
    ObjectCode code = compile_saxpy();
    code.get_kernel("saxpy");  // cached in the value: closing the value drops it too
    EXPECT_EQ(kernel_count(code.library_handle()), 1u);
    detail::wait_for_deferred_releases();  // earlier tests' libraries leave first
    const auto unloads_before = detail::library_unload_count();
    code.close();
    EXPECT_EQ(detail::library_unload_count(), unloads_before + 1);
}

// A value a cache handed out is another owner: closing it leaves the entry, and the library the
// entry's value loaded, to the next caller.
TEST(ObjectCodeCloseGpu, ACachesEntryKeepsItsLoadedLibraryThroughACallersClose) {
    CUDACORE_REQUIRE_GPU();
    Device(0).set_current();
    MemoryProgramCache cache;
    const CacheKey key = CacheKey::of_bytes("runtime close test");
    cache.put(key, compile_saxpy());
    ObjectCode first = *cache.get(key);
    (void)first.get_kernel("saxpy");
    const CUlibrary library = first.library_handle();
    detail::wait_for_deferred_releases();
    const auto unloads_before = detail::library_unload_count();
    first.close();
    EXPECT_EQ(detail::library_unload_count(), unloads_before);
    ObjectCode again = *cache.get(key);
    EXPECT_FALSE(again.is_closed());
    EXPECT_TRUE(again.is_loaded());
    EXPECT_EQ(again.library_handle(), library);
    EXPECT_EQ(kernel_count(library), 1u);
    // The entry's value goes with the cache's last holder: the library is unloaded then.
    again.reset();
    cache.clear();
    detail::wait_for_deferred_releases();
    EXPECT_EQ(detail::library_unload_count(), unloads_before + 1);
}

}  // namespace
