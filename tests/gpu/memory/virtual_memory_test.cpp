// VirtualMemoryResource on a GPU: an allocation grown from 2 MiB to 1 GiB keeps its contents and
// is used by a kernel at every size; growth by remapping when the next range is taken; errors;
// peer access on a second GPU.
#include "breadth_kernels.hpp"
#include "test_support.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/system.hpp"
#include "cudacore/virtual_memory_resource.hpp"
#include "loader/driver_api.hpp"

#include <cstdio>
#include <vector>

namespace {

using namespace cudacore;

constexpr std::size_t MiB = std::size_t{1} << 20;

struct Fixture {
    Device device{0};
    ObjectCode code = test::compile_breadth_kernels(device);
    Kernel check_then_fill = code.get_kernel("check_then_fill");
    Stream stream = device.create_stream();
    Buffer mismatches = device.allocate(sizeof(unsigned long long), stream);

    // Checks the first `valid` bytes hold the pattern and fills all of `buffer`; returns the
    // number of words that did not hold it.
    unsigned long long check_and_fill(const Buffer& buffer, std::size_t valid_bytes) {
        mismatches.fill_byte(0, stream);
        const unsigned long long count = buffer.size() / sizeof(unsigned);
        const unsigned blocks = static_cast<unsigned>(std::min<unsigned long long>((count + 255) / 256, 4096));
        launch(stream, LaunchConfig{.grid = blocks, .block = 256}, check_then_fill, buffer,
               static_cast<unsigned long long>(valid_bytes / sizeof(unsigned)), count, mismatches);
        unsigned long long wrong = ~0ull;
        mismatches.copy_to(&wrong, sizeof wrong, stream);
        stream.sync();
        return wrong;
    }
};

bool vmm_supported(const Device& device) {
    return device.attribute(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED) != 0;
}

TEST(VirtualMemoryGpu, GrowsFrom2MiBTo1GiBKeepingContentsUsedByAKernelAtEachSize) {
    CUDACORE_REQUIRE_GPU();
    Fixture f;
    if (!vmm_supported(f.device)) GTEST_SKIP() << "device 0 has no virtual memory management";
    auto vmm = std::make_shared<VirtualMemoryResource>(f.device);
    ASSERT_GT(vmm->granularity(), 0u);
    Buffer buffer = vmm->allocate(2 * MiB, f.stream);
    EXPECT_EQ(f.check_and_fill(buffer, 0), 0u);
    std::size_t size = 2 * MiB;
    std::size_t in_place = 0, remapped = 0;  // a grow in place keeps the address
    while (size < 1024 * MiB) {
        const std::size_t grown = size * 2;
        Buffer previous = buffer;
        const CUdeviceptr address = buffer.handle();
        buffer = vmm->grow(buffer, grown, f.stream);
        ++(buffer.handle() == address ? in_place : remapped);
        EXPECT_TRUE(previous.is_closed()) << "the old buffer must be closed after grow";
        EXPECT_EQ(buffer.size(), grown);
        EXPECT_EQ(f.check_and_fill(buffer, size), 0u) << "contents lost growing to " << grown;
        size = grown;
    }
    EXPECT_EQ(buffer.size(), 1024 * MiB);
    EXPECT_EQ(in_place + remapped, 9u);
    std::printf("grown in place %zu times, by remapping %zu times (granularity %zu bytes)\n", in_place,
                remapped, vmm->granularity());
    // The host sees the same words the kernel checked.
    std::vector<unsigned> tail(1024);
    ASSERT_EQ(detail::driver().cuMemcpyDtoHAsync(tail.data(),
                                                 buffer.handle() + buffer.size() - tail.size() * sizeof(unsigned),
                                                 tail.size() * sizeof(unsigned), f.stream.handle()),
              CUDA_SUCCESS);
    f.stream.sync();
    const std::size_t first = buffer.size() / sizeof(unsigned) - tail.size();
    for (std::size_t i = 0; i < tail.size(); ++i)
        ASSERT_EQ(tail[i], test::breadth_pattern(first + i)) << i;
}

TEST(VirtualMemoryGpu, GrowsByRemappingWhenTheNextRangeIsTaken) {
    CUDACORE_REQUIRE_GPU();
    Fixture f;
    if (!vmm_supported(f.device)) GTEST_SKIP() << "device 0 has no virtual memory management";
    auto vmm = std::make_shared<VirtualMemoryResource>(f.device);
    const std::size_t size = vmm->granularity();
    Buffer buffer = vmm->allocate(size, f.stream);
    EXPECT_EQ(f.check_and_fill(buffer, 0), 0u);
    // Take the range right after the buffer. When the driver hands out another range instead,
    // that range is unavailable already (taken, or kept free by the driver's own placement),
    // which grow() meets the same way: either way it must move the buffer.
    const auto& api = detail::driver();
    CUdeviceptr blocker = 0;
    ASSERT_EQ(api.cuMemAddressReserve(&blocker, size, 0, buffer.handle() + size, 0), CUDA_SUCCESS);
    const CUdeviceptr before = buffer.handle();
    Buffer grown = vmm->grow(buffer, 3 * size, f.stream);
    EXPECT_NE(grown.handle(), before);
    EXPECT_EQ(f.check_and_fill(grown, size), 0u) << "contents lost by remapping";
    EXPECT_EQ(api.cuMemAddressFree(blocker, size), CUDA_SUCCESS);
}

TEST(VirtualMemoryGpu, GrowRefusesSmallerSizesAndForeignBuffers) {
    CUDACORE_REQUIRE_GPU();
    Fixture f;
    if (!vmm_supported(f.device)) GTEST_SKIP() << "device 0 has no virtual memory management";
    auto vmm = std::make_shared<VirtualMemoryResource>(f.device);
    Buffer buffer = vmm->allocate(4 * MiB, f.stream);
    EXPECT_THROW(vmm->grow(buffer, MiB, f.stream), InvalidArgumentError);
    Buffer other = f.device.allocate(MiB, f.stream);
    try {
        vmm->grow(other, 2 * MiB, f.stream);
        ADD_FAILURE() << "no error";
    } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("was not allocated by virtual memory of device 0"),
                  std::string::npos)
            << e.what();
    }
    // A size within the mapped granularity needs no new mapping and keeps the address.
    const std::size_t mapped = ((4 * MiB + vmm->granularity() - 1) / vmm->granularity()) * vmm->granularity();
    const CUdeviceptr address = buffer.handle();
    Buffer same = vmm->grow(buffer, mapped, f.stream);
    EXPECT_EQ(same.handle(), address);
    EXPECT_EQ(f.check_and_fill(same, 0), 0u);
}

TEST(VirtualMemoryGpu, OptionsTheDeviceRefusesAreNamed) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    if (!vmm_supported(device)) GTEST_SKIP() << "device 0 has no virtual memory management";
    if (device.attribute(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_HANDLE_SUPPORTED) != 0)
        GTEST_SKIP() << "this device supports win32 handles";
    VirtualMemoryResourceOptions options;
    options.handle_types = CU_MEM_HANDLE_TYPE_WIN32;
    try {
        VirtualMemoryResource vmm(device, options);
        ADD_FAILURE() << "no error";
    } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("handle type win32 is not supported by device 0"),
                  std::string::npos)
            << e.what();
    }
}

TEST(VirtualMemoryGpu, PeerDeviceWritesThroughItsAccessDescriptor) {
    CUDACORE_REQUIRE_GPU();
    if (system::device_count() < 2) GTEST_SKIP() << "needs two GPUs";
    Device owner(0), peer(1);
    if (!vmm_supported(owner)) GTEST_SKIP() << "device 0 has no virtual memory management";
    int can = 0;
    detail::driver().cuDeviceCanAccessPeer(&can, peer.handle(), owner.handle());
    if (!can) GTEST_SKIP() << "device 1 cannot access device 0";
    VirtualMemoryResourceOptions options;
    options.peer_access = {{1, MemoryAccess::read_write}};
    auto vmm = std::make_shared<VirtualMemoryResource>(owner, options);
    Stream owner_stream = owner.create_stream();
    Buffer buffer = vmm->allocate(MiB, owner_stream);
    ObjectCode code = test::compile_breadth_kernels(peer);
    Kernel write_sequence = code.get_kernel("write_sequence");
    Stream peer_stream = peer.create_stream();
    const unsigned long long count = MiB / sizeof(unsigned);
    launch(peer_stream, LaunchConfig{.grid = 256, .block = 256}, write_sequence, buffer, count, 5u);
    peer_stream.sync();
    std::vector<unsigned> host(count);
    buffer.copy_to(host, owner_stream);
    owner_stream.sync();
    for (std::size_t i = 0; i < host.size(); ++i) ASSERT_EQ(host[i], 5u + i) << i;
}

}  // namespace
