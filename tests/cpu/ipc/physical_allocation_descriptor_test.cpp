// Physical allocation descriptors as bytes, with no driver: a round trip, and truncated,
// foreign, stale, corrupted and oversized input refused with a SerializationError saying which;
// exports and imports refused before the driver for what cannot be exported or imported.
#include "test_support.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/physical_allocation_ipc.hpp"
#include "support/box_access.hpp"

#include <gtest/gtest.h>

namespace {

using namespace cudacore;
using test::expect_invalid;

PhysicalAllocationDescriptor sample() {
    PhysicalAllocationDescriptor d;
    for (std::size_t i = 0; i < d.device_uuid.size(); ++i) d.device_uuid[i] = static_cast<unsigned char>(i * 5 + 1);
    d.size = (std::uint64_t{1} << 34) + (std::uint64_t{2} << 20);  // above 32 bits
    d.exporter_pid = 31337;
    d.handle_type = CU_MEM_HANDLE_TYPE_FABRIC;
    for (std::size_t i = 0; i < d.fabric_handle.size(); ++i) d.fabric_handle[i] = static_cast<unsigned char>(200 - i);
    return d;
}

TEST(PhysicalAllocationDescriptor, RoundTripsEveryField) {
    const PhysicalAllocationDescriptor d = sample();
    const std::vector<std::byte> bytes = d.to_bytes();
    EXPECT_EQ(bytes.size(), 16u + 100u + 8u);
    EXPECT_EQ(PhysicalAllocationDescriptor::from_bytes(bytes), d);
    PhysicalAllocationDescriptor posix;
    posix.size = 4096;
    EXPECT_EQ(PhysicalAllocationDescriptor::from_bytes(posix.to_bytes()), posix);
}

TEST(PhysicalAllocationDescriptor, BadBytesAreRefusedSayingWhy) {
    const std::vector<std::byte> good = sample().to_bytes();
    auto refused = [](std::vector<std::byte> bytes, const char* why) {
        expect_invalid<SerializationError>([&] { PhysicalAllocationDescriptor::from_bytes(bytes); },
                                           {"physical allocation IPC descriptor", why});
    };
    refused({good.begin(), good.begin() + 10}, "truncated");
    refused({good.begin(), good.end() - 1}, "bytes, expected 124");
    std::vector<std::byte> longer = good;
    longer.push_back(std::byte{0});
    refused(longer, "bytes, expected 124");
    std::vector<std::byte> foreign = good;
    foreign[3] = std::byte{'X'};
    refused(foreign, "foreign bytes");
    std::vector<std::byte> stale = good;
    stale[8] = std::byte{2};
    refused(stale, "format version 2");
    std::vector<std::byte> corrupted = good;
    corrupted[40] ^= std::byte{1};
    refused(corrupted, "checksum mismatch");
}

TEST(PhysicalAllocationDescriptor, ExportAndImportRefuseWhatCannotTravel) {
    const auto closed = detail::BoxAccess::empty<PhysicalAllocation>();
    expect_invalid([&] { export_physical_allocation(closed); }, {"export_physical_allocation"});
    PhysicalAllocationHandle no_fd;
    no_fd.descriptor.size = 4096;
    expect_invalid([&] { import_physical_allocation(std::move(no_fd)); },
                   {"import_physical_allocation", "no file descriptor"});
    PhysicalAllocationHandle bad_type;
    bad_type.descriptor.handle_type = 99;
    expect_invalid([&] { import_physical_allocation(std::move(bad_type)); }, {"handle type 99"});
}

}  // namespace
