// The virtual memory parts on a GPU: an allocation mapped into a reserved range and used by
// kernels; the same allocation mapped twice; lifetimes held whatever order the objects go in;
// access read and changed; driver-side errors; a vector striped over every GPU (and over two,
// each reading the other's stripe).
#include "multi_gpu_kernels.hpp"
#include "test_support.hpp"

#include "cudacore/current_context_scope.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/physical_allocation.hpp"
#include "cudacore/system.hpp"
#include "cudacore/virtual_address_range.hpp"
#include "cudacore/virtual_memory_mapping.hpp"
#include "loader/driver_api.hpp"

#include <thread>
#include <vector>

namespace {

using namespace cudacore;
using test::expect_invalid;
using test::mismatches;
using test::write_pattern;

#define REQUIRE_VMM(device)                                                                   \
    do {                                                                                      \
        CUDACORE_REQUIRE_GPU();                                                               \
        if (!Device(device).attribute(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED)) \
            GTEST_SKIP() << "device " << (device) << " has no virtual memory management";    \
    } while (0)

TEST(VirtualMemoryPartsGpu, AnAllocationMappedIntoARangeIsWrittenAndReadByKernels) {
    REQUIRE_VMM(0);
    const Device device(0);
    const ObjectCode code = test::compile_multi_gpu_kernels(device);
    Stream stream = device.create_stream();
    const AllocationGranularity granularity = allocation_granularity(device);
    ASSERT_GT(granularity.minimum, 0u);
    ASSERT_GE(granularity.recommended, granularity.minimum);
    PhysicalAllocation memory = PhysicalAllocation::create(device, 4 * granularity.minimum);
    EXPECT_EQ(memory.size(), 4 * granularity.minimum);
    EXPECT_EQ(memory.device_ordinal(), 0);
    EXPECT_EQ(memory.granularity(), granularity.minimum);
    VirtualAddressRange range = VirtualAddressRange::reserve(device, 8 * granularity.minimum);
    ASSERT_NE(range.address(), 0u);
    VirtualMemoryMapping mapping =
        VirtualMemoryMapping::map(range, 2 * granularity.minimum, memory);
    EXPECT_EQ(mapping.address(), range.address() + 2 * granularity.minimum);
    EXPECT_EQ(mapping.size(), memory.size());
    EXPECT_EQ(mapping.access(0), MemoryAccess::read_write);
    Buffer view = mapping.as_buffer();
    EXPECT_EQ(view.size(), memory.size());
    write_pattern(code, view, stream, 3, 1);
    EXPECT_EQ(mismatches(code, view, stream, 3, 1), 0u);
    std::vector<std::uint32_t> host(view.size() / 4);
    view.copy_to(host, stream);
    stream.sync();
    EXPECT_EQ(host[12345], 3u * 12345u + 1u);
}

// A range is reserved through the device named (on each device there is), with the calling
// thread's current context left as it was; without a device and with no context current it is
// refused, where it used to retain device 0's primary context unasked.
TEST(VirtualMemoryPartsGpu, ARangeIsReservedThroughTheDeviceNamedOrRefusedWithNoneCurrent) {
    REQUIRE_VMM(0);
    std::thread([] {
        CUcontext current = nullptr;
        ASSERT_EQ(detail::driver().cuCtxGetCurrent(&current), CUDA_SUCCESS);
        ASSERT_EQ(current, nullptr);
        for (int ordinal = 0; ordinal < Device::count(); ++ordinal) {
            const Device device(ordinal);
            if (!device.attribute(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED)) continue;
            const std::size_t g = allocation_granularity(device).minimum;
            VirtualAddressRange range = VirtualAddressRange::reserve(device, 2 * g);
            EXPECT_NE(range.address(), 0u);
            ASSERT_EQ(detail::driver().cuCtxGetCurrent(&current), CUDA_SUCCESS);
            EXPECT_EQ(current, nullptr) << "reserve made a context current";
            // Mapped with memory of that device and used through a Buffer.
            PhysicalAllocation memory = PhysicalAllocation::create(device, g);
            VirtualMemoryMapping mapping = VirtualMemoryMapping::map(range, g, memory);
            EXPECT_EQ(mapping.address(), range.address() + g);
            range.close();
        }
        expect_invalid([] { VirtualAddressRange::reserve(1 << 21); },
                       {"VirtualAddressRange::reserve", "no context is current",
                        "reserve(device, size)"});
    }).join();
    // With a context current, its device.
    const Device device(0);
    const CurrentContextScope on(device.context());
    VirtualAddressRange range = VirtualAddressRange::reserve(allocation_granularity(device).minimum);
    EXPECT_NE(range.address(), 0u);
}

TEST(VirtualMemoryPartsGpu, OneAllocationMappedTwiceShowsTheSameWords) {
    REQUIRE_VMM(0);
    const Device device(0);
    const ObjectCode code = test::compile_multi_gpu_kernels(device);
    Stream stream = device.create_stream();
    const std::size_t g = allocation_granularity(device).minimum;
    PhysicalAllocation memory = PhysicalAllocation::create(device, 2 * g);
    VirtualAddressRange first = VirtualAddressRange::reserve(device, 2 * g);
    VirtualAddressRange second = VirtualAddressRange::reserve(device, 4 * g);
    VirtualMemoryMapping a = VirtualMemoryMapping::map(first, 0, memory);
    // The same allocation again, through the other range and further on in it (the driver maps
    // an allocation from its start only: a non-zero allocation_offset is its NOT_SUPPORTED).
    VirtualMemoryMapping b = VirtualMemoryMapping::map(second, 2 * g, memory);
    write_pattern(code, a.as_buffer(), stream, 7, 5);
    stream.sync();
    std::vector<std::uint32_t> host(2 * g / 4);
    b.as_buffer().copy_to(host, stream);
    stream.sync();
    EXPECT_EQ(b.address(), second.address() + 2 * g);
    EXPECT_EQ(host[0], 5u);
    EXPECT_EQ(host.back(), static_cast<std::uint32_t>((host.size() - 1) * 7 + 5));
}

TEST(VirtualMemoryPartsGpu, AMappingKeepsItsRangeAndAllocationWhateverGoesFirst) {
    REQUIRE_VMM(0);
    const Device device(0);
    const ObjectCode code = test::compile_multi_gpu_kernels(device);
    Stream stream = device.create_stream();
    const std::size_t g = allocation_granularity(device).minimum;
    for (int order = 0; order < 3; ++order) {
        PhysicalAllocation memory = PhysicalAllocation::create(device, g);
        VirtualAddressRange range = VirtualAddressRange::reserve(device, g);
        VirtualMemoryMapping mapping = VirtualMemoryMapping::map(range, 0, memory);
        Buffer view = mapping.as_buffer();
        // Close the range and the allocation (every copy of them), or drop them: the mapping
        // still holds both.
        if (order == 0) { memory.close(); range.close(); }
        if (order == 1) { range.reset(); memory.reset(); }
        if (order == 2) mapping.close();  // the Buffer holds the mapping itself
        if (order < 2) {
            EXPECT_TRUE(order == 1 || (memory.is_closed() && range.is_closed()));
            EXPECT_FALSE(mapping.is_closed());
        }
        write_pattern(code, view, stream, 11, order);
        EXPECT_EQ(mismatches(code, view, stream, 11, order), 0u) << "order " << order;
        view.close();
        // Closed objects refuse their calls, naming them.
        if (order == 0)
            expect_invalid([&] { VirtualMemoryMapping::map(range, 0, memory); },
                           {"VirtualMemoryMapping::map", "is closed"});
    }
}

TEST(VirtualMemoryPartsGpu, SizesAndPlacesTheGranularityForbidsAreRefusedBeforeTheDriver) {
    REQUIRE_VMM(0);
    const Device device(0);
    const std::size_t g = allocation_granularity(device).minimum;
    expect_invalid([&] { PhysicalAllocation::create(device, g + 4096); },
                   {"PhysicalAllocation::create", "not a multiple", std::to_string(g).c_str()});
    PhysicalAllocation memory = PhysicalAllocation::create(device, 2 * g);
    VirtualAddressRange range = VirtualAddressRange::reserve(device, 2 * g);
    expect_invalid([&] { VirtualMemoryMapping::map(range, 4096, memory); }, {"offset 4096", "not a multiple"});
    expect_invalid([&] { VirtualMemoryMapping::map(range, g, memory); }, {"beyond the end of address range"});
    expect_invalid([&] { VirtualMemoryMapping::map(range, 0, memory, {.access = {{.device = 99}}}); },
                   {"device 99 does not exist"});
    // The driver refuses a part of the range that is mapped already; nothing is left mapped.
    VirtualMemoryMapping first = VirtualMemoryMapping::map(range, 0, memory);
    expect_invalid<DriverError>([&] { VirtualMemoryMapping::map(range, 0, memory); }, {"cuMemMap"});
    EXPECT_EQ(first.access(0), MemoryAccess::read_write);
}

// Every GPU (one will do) backs one stripe of a vector; each device's kernel writes the whole
// vector through the one range, and device 0 checks it.
TEST(VirtualMemoryPartsGpu, AVectorStripedOverEveryGpuIsUsableFromEach) {
    REQUIRE_VMM(0);
    std::vector<Device> devices;
    for (const Device& d : system::devices())
        if (d.attribute(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED) &&
            (d.ordinal() == 0 || (d.can_access_peer(Device(0)) && Device(0).can_access_peer(d))))
            devices.push_back(d);
    std::size_t stripe = 0;
    for (const Device& d : devices) stripe = std::max(stripe, allocation_granularity(d).minimum);
    std::vector<PeerMemoryAccess> everyone;
    for (const Device& d : devices) everyone.push_back({.device = d.ordinal()});
    VirtualAddressRange range = VirtualAddressRange::reserve(devices.front(), devices.size() * stripe);
    std::vector<VirtualMemoryMapping> mappings;
    for (std::size_t i = 0; i < devices.size(); ++i) {
        PhysicalAllocation part = PhysicalAllocation::create(devices[i], stripe);
        mappings.push_back(VirtualMemoryMapping::map(range, i * stripe, part, {.access = everyone}));
        EXPECT_EQ(mappings.back().device_ordinal(), devices[i].ordinal());
    }
    Buffer vector = as_buffer(mappings);
    EXPECT_EQ(vector.size(), devices.size() * stripe);
    for (std::size_t i = 0; i < devices.size(); ++i) {
        const ObjectCode code = test::compile_multi_gpu_kernels(devices[i]);
        Stream stream = devices[i].create_stream();
        write_pattern(code, vector, stream, 13, static_cast<unsigned>(i));
        EXPECT_EQ(mismatches(code, vector, stream, 13, static_cast<unsigned>(i)), 0u)
            << "written and read by device " << devices[i].ordinal() << " of " << devices.size();
    }
    std::printf("striped %zu bytes over %zu device(s)\n", vector.size(), devices.size());
}

TEST(VirtualMemoryPartsGpu, TwoGpusEachReadTheOthersStripeAndAccessCanBeNarrowed) {
    CUDACORE_REQUIRE_GPU();
    if (system::device_count() < 2) GTEST_SKIP() << "needs two GPUs, found " << system::device_count();
    REQUIRE_VMM(0);
    REQUIRE_VMM(1);
    const Device d0(0), d1(1);
    if (!d0.can_access_peer(d1) || !d1.can_access_peer(d0))
        GTEST_SKIP() << "devices 0 and 1 cannot reach each other's memory (cuDeviceCanAccessPeer)";
    const std::size_t g = std::max(allocation_granularity(d0).minimum, allocation_granularity(d1).minimum);
    VirtualAddressRange range = VirtualAddressRange::reserve(d0, 2 * g);
    const std::vector<PeerMemoryAccess> both{{.device = 0}, {.device = 1}};
    VirtualMemoryMapping on0 = VirtualMemoryMapping::map(range, 0, PhysicalAllocation::create(d0, g), {.access = both});
    VirtualMemoryMapping on1 = VirtualMemoryMapping::map(range, g, PhysicalAllocation::create(d1, g), {.access = both});
    const ObjectCode code0 = test::compile_multi_gpu_kernels(d0), code1 = test::compile_multi_gpu_kernels(d1);
    Stream s0 = d0.create_stream(), s1 = d1.create_stream();
    write_pattern(code0, on1.as_buffer(), s0, 17, 3);  // device 0 writes device 1's stripe
    write_pattern(code1, on0.as_buffer(), s1, 19, 4);  // and the other way round
    s0.sync();
    s1.sync();
    EXPECT_EQ(mismatches(code1, on1.as_buffer(), s1, 17, 3), 0u);
    EXPECT_EQ(mismatches(code0, on0.as_buffer(), s0, 19, 4), 0u);
    on1.set_access({{.device = 0, .access = MemoryAccess::read}});
    EXPECT_EQ(on1.access(0), MemoryAccess::read);
    EXPECT_EQ(on1.access(1), MemoryAccess::read_write);
    EXPECT_EQ(mismatches(code0, on1.as_buffer(), s0, 17, 3), 0u);  // reading is still allowed
}

}  // namespace
