// The virtual memory parts' argument checks, with no GPU: sizes and offsets that are not
// multiples of the granularity, parts beyond the allocation or the range, access lists, and
// calls given empty objects, each refused with a message naming what is wrong before any driver
// call.
#include "test_support.hpp"

#include "cudacore/physical_allocation.hpp"
#include "cudacore/virtual_address_range.hpp"
#include "cudacore/virtual_memory_mapping.hpp"
#include "memory/vmm/virtual_memory_checks.hpp"
#include "support/box_access.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace {

using namespace cudacore;
using test::expect_invalid;
using detail::MappingRequest;

constexpr std::size_t G = std::size_t{2} << 20;  // a typical granularity, 2 MiB

std::size_t mapping(MappingRequest request) {
    return detail::check_mapping(request, "address range R", "physical allocation A");
}

TEST(VirtualMemoryParts, PhysicalSizeMustBeAPositiveMultipleOfTheGranularity) {
    EXPECT_NO_THROW(detail::check_physical_size(4 * G, G, "device 0"));
    expect_invalid([] { detail::check_physical_size(0, G, "device 0"); }, {"PhysicalAllocation::create", "size 0", "device 0"});
    expect_invalid([] { detail::check_physical_size(G + 4096, G, "device 1"); },
                   {"PhysicalAllocation::create", "2101248 bytes", "device 1", "not a multiple", "2097152 bytes"});
}

TEST(VirtualMemoryParts, ReserveRefusesSizeZeroAndAnAlignmentThatIsNotAPowerOfTwo) {
    EXPECT_NO_THROW(detail::check_reserve(G, 0));
    EXPECT_NO_THROW(detail::check_reserve(G, 4 * G));
    expect_invalid([] { detail::check_reserve(0, 0); }, {"VirtualAddressRange::reserve", "size 0"});
    expect_invalid([] { detail::check_reserve(G, 3 * G); }, {"alignment 6291456", "not a power of two"});
    // The public call refuses before the driver is needed (no driver here).
    expect_invalid([] { VirtualAddressRange::reserve(0); }, {"size 0"});
    expect_invalid([] { VirtualAddressRange::reserve(G, {.alignment = 12345}); }, {"not a power of two"});
}

TEST(VirtualMemoryParts, AMappingInsideBothIsAcceptedAndItsSizeResolved) {
    EXPECT_EQ(mapping({.range_size = 8 * G, .offset = 2 * G, .allocation_size = 4 * G, .granularity = G}), 4 * G);
    EXPECT_EQ(mapping({.range_size = 8 * G, .offset = 0, .allocation_size = 4 * G, .allocation_offset = G,
                       .granularity = G}),
              3 * G);
    EXPECT_EQ(mapping({.range_size = 8 * G, .offset = 7 * G, .allocation_size = 4 * G, .allocation_offset = G,
                       .size = G, .granularity = G}),
              G);
}

TEST(VirtualMemoryParts, OffsetsAndSizesNotMultiplesOfTheGranularityAreRefused) {
    expect_invalid([] { mapping({.range_size = 8 * G, .offset = 4096, .allocation_size = 4 * G, .granularity = G}); },
                   {"VirtualMemoryMapping::map", "offset 4096", "address range R", "not a multiple", "physical allocation A"});
    expect_invalid([] {
        mapping({.range_size = 8 * G, .allocation_size = 4 * G, .allocation_offset = 512, .granularity = G});
    }, {"allocation_offset 512", "not a multiple"});
    expect_invalid([] {
        mapping({.range_size = 8 * G, .allocation_size = 4 * G, .size = G / 2, .granularity = G});
    }, {"size 1048576 bytes", "not a multiple"});
}

TEST(VirtualMemoryParts, MappingsBeyondTheAllocationOrTheRangeAreRefused) {
    expect_invalid([] { mapping({.range_size = 8 * G, .offset = 6 * G, .allocation_size = 4 * G, .granularity = G}); },
                   {"8388608 bytes at offset 12582912", "beyond the end of address range R"});
    expect_invalid([] { mapping({.range_size = 8 * G, .offset = 8 * G, .allocation_size = G, .granularity = G}); },
                   {"beyond the end of address range R"});
    expect_invalid([] {
        mapping({.range_size = 8 * G, .allocation_size = 4 * G, .allocation_offset = 2 * G, .size = 3 * G,
                 .granularity = G});
    }, {"beyond the end of physical allocation A"});
    expect_invalid([] {
        mapping({.range_size = 8 * G, .allocation_size = 4 * G, .allocation_offset = 4 * G, .granularity = G});
    }, {"allocation_offset 8388608", "not inside physical allocation A"});
    // Sizes near the top of size_t do not wrap around.
    expect_invalid([] {
        mapping({.range_size = 8 * G, .offset = 2 * G, .allocation_size = ~std::size_t{0} & ~(G - 1),
                 .size = ~std::size_t{0} & ~(G - 1), .granularity = G});
    }, {"beyond the end of address range R"});
}

TEST(VirtualMemoryParts, AccessListsNameEachExistingDeviceOnce) {
    const std::vector<PeerMemoryAccess> good{{.device = 0}, {.device = 1, .access = MemoryAccess::read}};
    EXPECT_NO_THROW(detail::check_access_list(good, 2, "set_access"));
    expect_invalid([] { detail::check_access_list({}, 2, "set_access"); }, {"set_access", "empty access list"});
    const std::vector<PeerMemoryAccess> twice{{.device = 1}, {.device = 1, .access = MemoryAccess::read}};
    expect_invalid([&] { detail::check_access_list(twice, 2, "set_access"); }, {"device 1 is listed twice"});
    const std::vector<PeerMemoryAccess> missing{{.device = 2}};
    expect_invalid([&] { detail::check_access_list(missing, 2, "map"); }, {"map", "device 2 does not exist", "2 devices"});
    const std::vector<PeerMemoryAccess> bad{{.device = 0, .access = static_cast<MemoryAccess>(7)}};
    expect_invalid([&] { detail::check_access_list(bad, 1, "map"); }, {"access 7", "not a MemoryAccess"});
}

TEST(VirtualMemoryParts, EmptyObjectsAreRefusedNamingTheCall) {
    const auto range = detail::BoxAccess::empty<VirtualAddressRange>();
    const auto allocation = detail::BoxAccess::empty<PhysicalAllocation>();
    auto mapping = detail::BoxAccess::empty<VirtualMemoryMapping>();
    EXPECT_EQ(range.size(), 0u);
    EXPECT_EQ(range.address(), 0u);
    EXPECT_EQ(allocation.size(), 0u);
    EXPECT_EQ(allocation.device_ordinal(), -1);
    EXPECT_EQ(mapping.device_ordinal(), -1);
    expect_invalid([&] { VirtualMemoryMapping::map(range, 0, allocation); },
                   {"VirtualMemoryMapping::map", "VirtualAddressRange"});
    expect_invalid([&] { mapping.as_buffer(); }, {"VirtualMemoryMapping::as_buffer"});
    expect_invalid([&] { mapping.set_access({{.device = 0}}); }, {"VirtualMemoryMapping::set_access"});
    expect_invalid([] { as_buffer(std::vector<VirtualMemoryMapping>{}); }, {"as_buffer", "no mappings"});
    expect_invalid([] { PhysicalAllocation::from_handle(0, G); }, {"from_handle", "null handle"});
    expect_invalid([] { PhysicalAllocation::from_handle(1, 0); }, {"from_handle", "size 0"});
    // Closing or resetting an empty object does nothing.
    mapping.close();
    mapping.reset();
    EXPECT_FALSE(mapping.is_closed());
}

}  // namespace
