// Stream::close() without a GPU (streams with a made-up handle that nothing destroys): cuda.core's
// meaning (the stream ends for every copy; reset() lets go of one share), and what later calls on
// the closed object and the calls it is given to do (an error naming the stream).
#include "empty_stream.hpp"
#include "host_memory_resource.hpp"
#include "test_support.hpp"

#include "cudacore/batched_copy.hpp"
#include "cudacore/buffer.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/event.hpp"
#include "cudacore/graph_builder.hpp"
#include "cudacore/managed_memory_resource.hpp"
#include "cudacore/peer_copy.hpp"
#include "cudacore/stream.hpp"
#include "support/box_access.hpp"

#include <memory>
#include <vector>

namespace {

using namespace cudacore;
using test::expect_invalid;
using test::fake_stream;

TEST(StreamClose, ClosesEveryCopy) {
    Stream stream = fake_stream(0x1000);
    const std::weak_ptr<detail::StreamBox> box = detail::box_of(stream);
    Stream copy = stream;
    stream.close();
    EXPECT_TRUE(stream.is_closed());
    EXPECT_EQ(stream.handle(), nullptr);
    EXPECT_EQ(detail::box_of(stream), nullptr);
    // The copy made before is closed with it, and nothing holds the stream any more.
    EXPECT_TRUE(copy.is_closed());
    EXPECT_EQ(copy.handle(), nullptr);
    expect_invalid([&] { copy.sync(); }, {"Stream::sync", "stream 0x1000", "is closed"});
    EXPECT_TRUE(box.expired());
}

TEST(StreamClose, ResetLetsGoOfThisObjectOnly) {
    Stream stream = fake_stream(0x1000);
    const std::weak_ptr<detail::StreamBox> box = detail::box_of(stream);
    Stream copy = stream;
    stream.reset();
    EXPECT_FALSE(stream.is_closed());
    EXPECT_EQ(stream.handle(), nullptr);
    expect_invalid([&] { stream.sync(); }, {"Stream::sync", "is empty (moved from or reset"});
    // The copy sees nothing change: open, the same stream, still held.
    EXPECT_FALSE(copy.is_closed());
    EXPECT_EQ(copy.handle(), reinterpret_cast<CUstream>(0x1000));
    EXPECT_FALSE(box.expired());
    copy = fake_stream(0x2000);  // the last holder lets go: the stream goes
    EXPECT_TRUE(box.expired());
}

TEST(StreamClose, TheLastHolderClosingReleasesTheStream) {
    Stream stream = fake_stream(0x1000);
    const std::weak_ptr<detail::StreamBox> box = detail::box_of(stream);
    stream.close();
    EXPECT_TRUE(box.expired());
    stream.close();  // again: nothing
    EXPECT_TRUE(stream.is_closed());
}

// Each call of a Stream that needs its stream, with the name its error gives (`other` is an open
// stream for the calls that take two).
template <class Expect>
void each_stream_call(const Stream& stream, const Stream& other, Expect&& expect) {
    expect([&] { stream.sync(); }, "Stream::sync");
    expect([&] { (void)stream.is_done(); }, "Stream::is_done");
    expect([&] { (void)stream.record(); }, "Stream::record");
    expect([&] { stream.wait(other); }, "Stream::wait");
    expect([&] { other.wait(stream); }, "Stream::wait (the stream waited for)");
    expect([&] { (void)stream.priority(); }, "Stream::priority");
    expect([&] { (void)stream.non_blocking(); }, "Stream::non_blocking");
    expect([&] { (void)stream.context(); }, "Stream::context");
    expect([&] { (void)stream.device(); }, "Stream::device");
    expect([&] { stream.launch_host_func([] {}); }, "Stream::launch_host_func");
    expect([&] { stream.check_host_functions(); }, "Stream::check_host_functions");
    expect([&] { (void)stream.begin_capture(); }, "Stream::begin_capture");
    expect([&] { (void)stream.is_capturing(); }, "Stream::is_capturing");
    expect([&] { ScopedTimer timer(stream); }, "ScopedTimer");
}

TEST(StreamClose, LaterCallsOnTheClosedObjectNameTheStream) {
    Stream stream = fake_stream(0x1000);
    stream.close();
    const Stream other = fake_stream(0x2000);
    const auto closed = [](const char* call) {
        return std::vector<const char*>{call, "stream 0x1000", "is closed"};
    };
    const auto expect = [&](auto&& call, const char* name) {
        const auto parts = closed(name);
        expect_invalid(call, {parts[0], parts[1], parts[2]});
    };
    each_stream_call(stream, other, expect);
    EXPECT_FALSE(stream.owns_handle());
}

// A moved-from Stream holds nothing: its calls throw (they dereferenced its empty state before),
// and so does timing it; assigning to it makes it usable again.
TEST(StreamClose, CallsOnAMovedFromStreamThrow) {
    Stream stream = fake_stream(0x1000);
    Stream taken = std::move(stream);
    EXPECT_EQ(taken.handle(), reinterpret_cast<CUstream>(0x1000));
    const Stream other = fake_stream(0x2000);
    const auto expect = [&](auto&& call, const char* name) {
        expect_invalid(call, {name, "moved from"});
    };
    each_stream_call(stream, other, expect);
    Stream closed = fake_stream(0x3000);
    closed.close();
    expect_invalid([&] { ScopedTimer timer(closed); }, {"ScopedTimer", "stream 0x3000", "is closed"});
    stream = fake_stream(0x4000);
    EXPECT_EQ(stream.handle(), reinterpret_cast<CUstream>(0x4000));
}

TEST(StreamClose, CallsGivenAClosedStreamNameIt) {
    Stream stream = fake_stream(0x1000);
    stream.close();
    auto resource = std::make_shared<test::HostMemoryResource>();
    expect_invalid([&] { (void)resource->allocate(64, stream); },
                   {"MemoryResource::allocate", "stream 0x1000", "is closed"});
    Buffer a = resource->allocate(64, fake_stream(0x2000));
    Buffer b = resource->allocate(64, fake_stream(0x2000));
    expect_invalid([&] { a.copy_from(b, stream); }, {"Buffer::copy_from", "stream 0x1000"});
    std::vector<char> host(64);
    expect_invalid([&] { a.copy_to(host, stream); }, {"Buffer::copy_to", "stream 0x1000"});
    expect_invalid([&] { a.fill_byte(0, stream); }, {"Buffer::fill_byte", "stream 0x1000"});
    expect_invalid([&] { a.fill_uint32(0, stream); }, {"Buffer::fill_uint32", "stream 0x1000"});
    expect_invalid([&] { a.fill_uint16(0, stream); }, {"Buffer::fill_uint16", "stream 0x1000"});
    const CopyPair copy{b, a};
    expect_invalid([&] { copy_batch({&copy, 1}, stream); }, {"copy_batch", "stream 0x1000"});
    expect_invalid([&] { copy_between_devices(a, b, stream); },
                   {"copy_between_devices", "stream 0x1000"});
    expect_invalid([&] { prefetch(a, MemoryLocation::host(), stream); }, {"prefetch", "stream 0x1000"});
    expect_invalid([&] { a.close(stream); }, {"Buffer::close", "stream 0x1000"});
    EXPECT_FALSE(a.is_closed());  // refused before anything was freed
    EXPECT_EQ(resource->frees.load(), 0);
}

TEST(StreamClose, CopiesAndAssignment) {
    Stream stream = fake_stream(0x1000);
    stream.close();
    Stream copy = stream;  // a copy of a closed Stream is closed, and names the same stream
    EXPECT_TRUE(copy.is_closed());
    expect_invalid([&] { copy.sync(); }, {"stream 0x1000", "is closed"});
    Stream moved = std::move(copy);
    EXPECT_TRUE(moved.is_closed());
    moved = fake_stream(0x3000);  // assigning another stream opens it again, as that stream
    EXPECT_FALSE(moved.is_closed());
    EXPECT_EQ(moved.handle(), reinterpret_cast<CUstream>(0x3000));
}

}  // namespace
