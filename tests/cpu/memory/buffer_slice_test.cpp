// Slices of a Buffer without a GPU (through a host-memory test resource): bounds, what a slice
// holds, the closing rules (a slice never frees, the owner's close closes its slices), slices of
// slices, and host access through a slice.
#include "empty_stream.hpp"
#include "host_memory_resource.hpp"
#include "test_support.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/buffer_slice.hpp"
#include "cudacore/errors.hpp"

#include <cstdint>
#include <limits>
#include <memory>
#include <thread>
#include <vector>

namespace {

using namespace cudacore;
using cudacore::test::HostMemoryResource;
using cudacore::test::expect_invalid;
using cudacore::test::no_stream;

TEST(BufferSlice, IsAPartOfTheOwnersMemoryAnsweringAsTheOwnerDoes) {
    auto resource = std::make_shared<HostMemoryResource>(true, 2);
    Buffer owner = resource->allocate(4096, no_stream());
    Buffer part = slice(owner, 1024, 512);
    EXPECT_EQ(part.handle(), owner.handle() + 1024);
    EXPECT_EQ(part.size(), 512u);
    EXPECT_FALSE(part.is_closed());
    EXPECT_FALSE(part.owns_memory()) << "a slice frees nothing";
    EXPECT_TRUE(part.is_host_accessible());
    EXPECT_FALSE(part.is_device_accessible());
    EXPECT_EQ(part.device_ordinal(), 2);
    EXPECT_EQ(part.memory_resource(), owner.memory_resource());
    EXPECT_NE(part, owner) << "a slice is another buffer than its owner";
    EXPECT_NE(part.description().find("part of buffer"), std::string::npos) << part.description();
    // Host access reaches the owner's bytes.
    part.span<std::uint8_t>()[0] = 42;
    EXPECT_EQ(owner.span<std::uint8_t>()[1024], 42);
    auto origin = slice_origin(part);
    ASSERT_TRUE(origin.has_value());
    EXPECT_EQ(origin->owner, owner);
    EXPECT_EQ(origin->offset, 1024u);
    EXPECT_FALSE(slice_origin(owner).has_value());
    EXPECT_FALSE(slice_origin(Buffer()).has_value());
    // To the end, and the whole buffer.
    EXPECT_EQ(slice(owner, 4000).size(), 96u);
    EXPECT_EQ(slice(owner, 0).handle(), owner.handle());
    Buffer empty = slice(owner, 4096);
    EXPECT_EQ(empty.size(), 0u);
    EXPECT_FALSE(empty.is_closed());
}

TEST(BufferSlice, OutOfBoundsRangesAreRefusedNamingTheRangeAndTheBuffer) {
    auto resource = std::make_shared<HostMemoryResource>();
    Buffer owner = resource->allocate(4096, no_stream());
    expect_invalid([&] { slice(owner, 4000, 200); },
                   {"slice", "[4000, 4200)", "outside", "4096 bytes"});
    expect_invalid([&] { slice(owner, 4097, 0); }, {"slice", "4097", "4096"});
    expect_invalid([&] { slice(owner, 4097); }, {"slice", "4097"});
    expect_invalid([&] { slice(owner, 8, std::numeric_limits<std::size_t>::max()); },
                   {"slice", "overflow", "outside"});
    expect_invalid([&] { slice(Buffer(), 0, 0); }, {"slice", "no memory"});
    Buffer part = slice(owner, 100, 100);
    expect_invalid([&] { slice(part, 50, 51); }, {"slice", "[50, 101)", "100 bytes"});
}

TEST(BufferSlice, ASliceOfASliceIsASliceOfTheOwnerAtTheSumOfTheOffsets) {
    auto resource = std::make_shared<HostMemoryResource>();
    Buffer owner = resource->allocate(4096, no_stream());
    Buffer outer = slice(owner, 1000, 2000);
    Buffer inner = slice(outer, 24, 100);
    EXPECT_EQ(inner.handle(), owner.handle() + 1024);
    auto origin = slice_origin(inner);
    ASSERT_TRUE(origin.has_value());
    EXPECT_EQ(origin->owner, owner) << "the owner, never the outer slice";
    EXPECT_EQ(origin->offset, 1024u);
    outer.close();  // the outer slice's close leaves the inner one open
    EXPECT_FALSE(inner.is_closed());
    EXPECT_EQ(resource->frees.load(), 0);
}

TEST(BufferSlice, HoldsTheOwnersMemoryAfterEveryCopyOfTheOwnerIsDropped) {
    auto resource = std::make_shared<HostMemoryResource>();
    Buffer part;
    {
        Buffer owner = resource->allocate(256, no_stream());
        part = slice(owner, 128, 64);
    }
    EXPECT_EQ(resource->frees.load(), 0) << "the slice holds the allocation";
    EXPECT_FALSE(part.is_closed());
    part.span<std::uint8_t>()[63] = 7;  // still the owner's live memory
    Buffer copy = part;
    part.reset();
    EXPECT_EQ(resource->frees.load(), 0) << "a copy of the slice holds it too";
    copy.reset();
    EXPECT_EQ(resource->frees.load(), 1) << "freed once, with the last slice";
}

TEST(BufferSlice, ClosingASliceNeverFreesOrClosesTheOwnerAndLetsGoOfIt) {
    auto resource = std::make_shared<HostMemoryResource>();
    Buffer owner = resource->allocate(256, no_stream());
    Buffer part = slice(owner, 0, 128);
    Buffer part_copy = part;
    Buffer sibling = slice(owner, 128, 128);
    part.close();
    EXPECT_TRUE(part.is_closed());
    EXPECT_TRUE(part_copy.is_closed()) << "close() ends the slice for every copy of it";
    EXPECT_EQ(part_copy.handle(), 0u);
    EXPECT_FALSE(owner.is_closed());
    EXPECT_FALSE(sibling.is_closed());
    EXPECT_EQ(resource->frees.load(), 0);
    expect_invalid([&] { part_copy.fill_byte(0, no_stream()); }, {"fill_byte", "closed"});
    expect_invalid([&] { slice_origin(part_copy); }, {"slice_origin", "closed"});
    // The closed slice let go of the owner: dropping the owner and its other slice frees it.
    owner.reset();
    sibling.reset();
    EXPECT_EQ(resource->frees.load(), 1);
}

TEST(BufferSlice, ClosingTheOwnerFreesNowAndClosesEverySliceOfIt) {
    auto resource = std::make_shared<HostMemoryResource>();
    Buffer owner = resource->allocate(256, no_stream());
    Buffer part = slice(owner, 64, 64);
    Buffer inner = slice(part, 0, 32);
    owner.close();
    EXPECT_EQ(resource->frees.load(), 1) << "the owner's close frees at once";
    EXPECT_TRUE(part.is_closed());
    EXPECT_TRUE(inner.is_closed());
    EXPECT_EQ(part.handle(), 0u);
    std::vector<std::uint8_t> host(64);
    expect_invalid([&] { part.copy_to(host, no_stream()); },
                   {"copy_to", "closed", "slice of a buffer that was closed"});
    expect_invalid([&] { slice(part, 0, 1); }, {"slice", "closed"});
    part.close();  // closing a closed slice does nothing
    part.reset();
    inner.reset();
    EXPECT_EQ(resource->frees.load(), 1) << "freed once";
}

TEST(BufferSlice, CopyingSlicesBetweenSizesThatDifferIsRefusedNamingBoth) {
    auto resource = std::make_shared<HostMemoryResource>();
    Buffer owner = resource->allocate(256, no_stream());
    Buffer a = slice(owner, 0, 16);
    Buffer b = slice(owner, 16, 32);
    expect_invalid([&] { a.copy_to(b, no_stream()); }, {"sizes differ", "16 bytes", "32 bytes"});
}

TEST(BufferSlice, SlicesMadeAndDroppedOnManyThreadsFreeTheOwnerOnce) {
    auto resource = std::make_shared<HostMemoryResource>();
    Buffer owner = resource->allocate(1 << 16, no_stream());
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t)
        threads.emplace_back([&owner, t] {
            for (int i = 0; i < 2000; ++i) {
                Buffer part = slice(owner, static_cast<std::size_t>(t) * 64, 64);
                Buffer inner = slice(part, 8, 8);
                if (inner.handle() != owner.handle() + static_cast<std::size_t>(t) * 64 + 8) std::abort();
            }
        });
    for (auto& thread : threads) thread.join();
    owner.reset();
    EXPECT_EQ(resource->frees.load(), 1);
}

}  // namespace
