// IPC descriptors as bytes, with no driver: round trips, and truncated, foreign, stale, corrupted
// and oversized input rejected with a SerializationError that says which.
#include "cudacore/errors.hpp"
#include "cudacore/ipc_descriptor.hpp"
#include "cudacore/object_code.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using namespace cudacore;

IpcBufferDescriptor sample_buffer() {
    IpcBufferDescriptor d;
    for (std::size_t i = 0; i < d.pool_id.size(); ++i) d.pool_id[i] = static_cast<unsigned char>(i + 1);
    d.size = (std::uint64_t{1} << 33) + 5;  // above 32 bits: all eight bytes matter
    d.exporter_pid = 4242;
    for (std::size_t i = 0; i < d.export_data.size(); ++i)
        d.export_data[i] = static_cast<unsigned char>(255 - i);
    return d;
}

IpcPoolDescriptor sample_pool() {
    IpcPoolDescriptor d;
    d.pool_id.fill(0xab);
    for (std::size_t i = 0; i < d.device_uuid.size(); ++i) d.device_uuid[i] = static_cast<unsigned char>(i * 7);
    d.exporter_pid = 77;
    return d;
}

IpcEventDescriptor sample_event() {
    IpcEventDescriptor d;
    d.device_uuid.fill(0x11);
    d.exporter_pid = -1;  // any value survives
    for (std::size_t i = 0; i < d.handle.size(); ++i) d.handle[i] = static_cast<unsigned char>(i * 3);
    return d;
}

// The message of the SerializationError that parsing `bytes` throws ("" when it does not throw).
template <class Descriptor>
std::string parse_error(std::span<const std::byte> bytes) {
    try {
        Descriptor::from_bytes(bytes);
    } catch (const SerializationError& e) {
        return e.what();
    }
    return "";
}

TEST(IpcDescriptor, RoundTripsEveryField) {
    const auto buffer = sample_buffer();
    EXPECT_EQ(IpcBufferDescriptor::from_bytes(buffer.to_bytes()), buffer);
    const auto pool = sample_pool();
    EXPECT_EQ(IpcPoolDescriptor::from_bytes(pool.to_bytes()), pool);
    const auto event = sample_event();
    EXPECT_EQ(IpcEventDescriptor::from_bytes(event.to_bytes()), event);
}

TEST(IpcDescriptor, APinnedPoolKeepsItsKindAndIsNotTakenForADevicePool) {
    IpcPoolDescriptor pinned = sample_pool();
    pinned.pinned = true;
    const auto bytes = pinned.to_bytes();
    EXPECT_EQ(static_cast<char>(bytes[6]), 'H');
    EXPECT_EQ(static_cast<char>(sample_pool().to_bytes()[6]), 'P');
    const IpcPoolDescriptor back = IpcPoolDescriptor::from_bytes(bytes);
    EXPECT_TRUE(back.pinned);
    EXPECT_EQ(back, pinned);
    EXPECT_FALSE(IpcPoolDescriptor::from_bytes(sample_pool().to_bytes()).pinned);
    EXPECT_NE(back, sample_pool());
    // The kind is covered by the checksum like every other byte.
    auto flipped = sample_pool().to_bytes();
    flipped[6] = static_cast<std::byte>('H');
    EXPECT_NE(parse_error<IpcPoolDescriptor>(flipped).find("checksum"), std::string::npos);
    // Another descriptor kind still names what it is.
    EXPECT_NE(parse_error<IpcBufferDescriptor>(bytes).find("this is a pinned memory pool descriptor"),
              std::string::npos)
        << parse_error<IpcBufferDescriptor>(bytes);
}

TEST(IpcDescriptor, BytesAreVersionedAndSized) {
    const auto bytes = sample_buffer().to_bytes();
    ASSERT_EQ(bytes.size(), 16u + 96u + 8u);
    EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0x89);
    EXPECT_EQ(static_cast<char>(bytes[6]), 'B');
    EXPECT_EQ(static_cast<unsigned char>(bytes[8]), 1);  // version 1, little-endian
    EXPECT_EQ(sample_pool().to_bytes().size(), 16u + 40u + 8u);
    EXPECT_EQ(sample_event().to_bytes().size(), 16u + 88u + 8u);
}

TEST(IpcDescriptor, EveryTruncationIsRejected) {
    const auto bytes = sample_buffer().to_bytes();
    for (std::size_t length = 0; length < bytes.size(); ++length) {
        const std::string error =
            parse_error<IpcBufferDescriptor>(std::span(bytes.data(), length));
        EXPECT_NE(error.find("truncated"), std::string::npos) << length << ": " << error;
        EXPECT_NE(error.find("buffer IPC descriptor"), std::string::npos) << error;
    }
}

TEST(IpcDescriptor, ForeignBytesAreRejected) {
    const std::string text = "this is not an IPC descriptor, but it is long enough to look like one "
                             "if nobody checked the magic at the start of it";
    const std::string error = parse_error<IpcBufferDescriptor>(std::as_bytes(std::span(text)));
    EXPECT_NE(error.find("not a cudacore IPC descriptor"), std::string::npos) << error;

    // Another cudacore format is foreign too.
    const std::string code = ObjectCode::from_cubin(std::string(32, '\x01'), "k").serialize();
    EXPECT_NE(parse_error<IpcEventDescriptor>(std::as_bytes(std::span(code))).find("bad magic"),
              std::string::npos);

    // A descriptor of another kind names what it is.
    const std::string kind = parse_error<IpcEventDescriptor>(sample_buffer().to_bytes());
    EXPECT_NE(kind.find("this is a buffer descriptor"), std::string::npos) << kind;
    EXPECT_NE(kind.find("event IPC descriptor"), std::string::npos) << kind;
    EXPECT_NE(parse_error<IpcBufferDescriptor>(sample_pool().to_bytes()).find("memory pool"),
              std::string::npos);
}

TEST(IpcDescriptor, StaleOrNewerVersionsAreRejected) {
    for (unsigned char version : {0, 2, 200}) {
        auto bytes = sample_pool().to_bytes();
        bytes[8] = std::byte{version};
        const std::string error = parse_error<IpcPoolDescriptor>(bytes);
        EXPECT_NE(error.find("format version " + std::to_string(version)), std::string::npos)
            << error;
        EXPECT_NE(error.find("reads version 1"), std::string::npos) << error;
    }
}

TEST(IpcDescriptor, CorruptionAndTrailingBytesAreRejected) {
    const auto good = sample_event().to_bytes();
    for (std::size_t i = 16; i < good.size(); ++i) {
        auto bytes = good;
        bytes[i] ^= std::byte{0x40};
        EXPECT_NE(parse_error<IpcEventDescriptor>(bytes).find("checksum"), std::string::npos) << i;
    }
    auto longer = good;
    longer.push_back(std::byte{0});
    EXPECT_NE(parse_error<IpcEventDescriptor>(longer).find("1 trailing bytes"), std::string::npos);

    auto payload = good;
    payload[12] = std::byte{99};  // a payload length this kind never has
    EXPECT_NE(parse_error<IpcEventDescriptor>(payload).find("payload of 99 bytes"),
              std::string::npos);
}

TEST(IpcDescriptor, ZeroSizedBufferIsRejected) {
    auto d = sample_buffer();
    d.size = 0;
    EXPECT_NE(parse_error<IpcBufferDescriptor>(d.to_bytes()).find("size 0"), std::string::npos);
}

TEST(IpcDescriptor, OrdinaryMemoryRoundTripsAndIsToldApartByItsKind) {
    IpcMemoryDescriptor d;
    d.device_uuid[1] = 0x42;
    d.exporter_pid = 1234;
    d.offset = 1 << 20;
    d.size = 2 << 20;
    d.handle[63] = 0x77;
    const auto bytes = d.to_bytes();
    EXPECT_EQ(IpcMemoryDescriptor::from_bytes(bytes), d);
    EXPECT_EQ(ipc_descriptor_kind(bytes), 'M');
    EXPECT_EQ(ipc_descriptor_kind(sample_buffer().to_bytes()), 'B');
    EXPECT_EQ(ipc_descriptor_kind({}), '\0');
    EXPECT_NE(parse_error<IpcMemoryDescriptor>(sample_buffer().to_bytes()).find("this is a buffer"),
              std::string::npos);
    auto empty = d;
    empty.size = 0;
    EXPECT_NE(parse_error<IpcMemoryDescriptor>(empty.to_bytes()).find("size 0"), std::string::npos);
    auto overflowing = d;
    overflowing.offset = ~std::uint64_t{0};
    EXPECT_NE(parse_error<IpcMemoryDescriptor>(overflowing.to_bytes()).find("overflows"),
              std::string::npos);
}

TEST(IpcDescriptor, IdsPrintAsHex) {
    IpcId id{};
    id[0] = 0x0f;
    id[15] = 0xa0;
    EXPECT_EQ(to_hex(id), "0f" + std::string(28, '0') + "a0");
}

}  // namespace
