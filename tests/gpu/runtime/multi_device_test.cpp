// Several devices: enumeration, DeviceScope, peer access between primary contexts and memory
// pools, and cross-device copies (a verified 1 GiB copy, staged and peer). Tests that need two
// GPUs skip with the reason on one.
#include "multi_gpu_kernels.hpp"
#include "test_support.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/device_memory_resource.hpp"
#include "cudacore/device_scope.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/event.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/peer_copy.hpp"
#include "runtime/runtime_handles.hpp"

#include <set>
#include <vector>

namespace {

using namespace cudacore;

constexpr std::size_t MiB = std::size_t{1} << 20;

#define REQUIRE_TWO_GPUS()                                                                \
    do {                                                                                  \
        CUDACORE_REQUIRE_GPU();                                                           \
        if (Device::count() < 2)                                                          \
            GTEST_SKIP() << "needs two GPUs, this machine has " << Device::count();       \
    } while (0)

using test::mismatches;
using test::write_pattern;

TEST(MultiDeviceGpu, AllListsEveryDeviceOnce) {
    CUDACORE_REQUIRE_GPU();
    const std::vector<Device> devices = Device::all();
    ASSERT_EQ(static_cast<int>(devices.size()), Device::count());
    ASSERT_GE(devices.size(), 1u);
    std::set<std::string> uuids;
    for (std::size_t i = 0; i < devices.size(); ++i) {
        EXPECT_EQ(devices[i].ordinal(), static_cast<int>(i));
        uuids.insert(devices[i].uuid_string());
    }
    EXPECT_EQ(uuids.size(), devices.size());
}

TEST(MultiDeviceGpu, DeviceScopeSetsAndRestoresTheCurrentContext) {
    CUDACORE_REQUIRE_GPU();
    const auto& api = detail::driver();
    ASSERT_EQ(api.cuCtxSetCurrent(nullptr), CUDA_SUCCESS);
    const Device last(Device::count() - 1);
    {
        DeviceScope outer(Device(0));
        CUcontext current = nullptr;
        ASSERT_EQ(api.cuCtxGetCurrent(&current), CUDA_SUCCESS);
        EXPECT_EQ(current, Device(0).context().handle());
        EXPECT_EQ(Device::current(), Device(0));
        {
            DeviceScope inner(last);
            EXPECT_EQ(Device::current(), last);
        }
        EXPECT_EQ(Device::current(), Device(0));
    }
    CUcontext after = reinterpret_cast<CUcontext>(1);
    ASSERT_EQ(api.cuCtxGetCurrent(&after), CUDA_SUCCESS);
    EXPECT_EQ(after, nullptr);
}

// Waiting on an event of another device works, except on an IPC event: the driver crashes on
// that, so Stream::wait refuses it with a clear error (and a wait on the event's own device works).
TEST(MultiDeviceGpu, AnIpcEventOfAnotherDeviceIsRefusedByWaitAndAPlainOneWorks) {
    REQUIRE_TWO_GPUS();
    const Device first(0), second(1);
    Stream here = first.create_stream();
    Stream there = second.create_stream();
    Event plain = there.record();
    here.wait(plain);
    here.sync();
    Event shared = second.create_event({.ipc_enabled = true});
    there.record(shared);
    try {
        here.wait(shared);
        FAIL() << "a stream of device 0 waited on an IPC event of device 1";
    } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("IPC event of device 1"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("Stream::wait"), std::string::npos) << e.what();
    }
    Stream also_there = second.create_stream();
    also_there.wait(shared);
    also_there.sync();
    here.sync();
}

TEST(MultiDeviceGpu, PeerAccessToItselfIsAlwaysOn) {
    CUDACORE_REQUIRE_GPU();
    const Device device(0);
    EXPECT_TRUE(device.is_peer_access_enabled(device));
    EXPECT_NO_THROW(device.enable_peer_access(device));
    EXPECT_NO_THROW(device.disable_peer_access(device));
    EXPECT_TRUE(device.is_peer_access_enabled(device));
}

TEST(MultiDeviceGpu, PeerAccessIsIdempotentOrRefusedClearly) {
    REQUIRE_TWO_GPUS();
    const Device a(0), b(1);
    if (!a.can_access_peer(b)) {
        try {
            a.enable_peer_access(b);
            FAIL() << "enable_peer_access succeeded without hardware support";
        } catch (const DriverError& e) {
            EXPECT_EQ(e.status(), CUDA_ERROR_PEER_ACCESS_UNSUPPORTED);
            EXPECT_NE(std::string(e.what()).find("device 0 to device 1"), std::string::npos)
                << e.what();
        }
        GTEST_SKIP() << "devices 0 and 1 are not peer capable: the refusal was checked";
    }
    a.enable_peer_access(b);
    a.enable_peer_access(b);  // idempotent
    EXPECT_TRUE(a.is_peer_access_enabled(b));
    EXPECT_FALSE(b.is_peer_access_enabled(a));  // one direction only
    a.disable_peer_access(b);
    a.disable_peer_access(b);
    EXPECT_FALSE(a.is_peer_access_enabled(b));
}

TEST(MultiDeviceGpu, PoolPeerAccessLetsAKernelReadAnotherDevicesPool) {
    REQUIRE_TWO_GPUS();
    const Device owner(1), reader(0);
    if (!reader.can_access_peer(owner)) GTEST_SKIP() << "devices 0 and 1 are not peer capable";
    const ObjectCode code = test::compile_multi_gpu_kernels(reader);
    // A pool of its own, so the device's default pool is left as it was.
    auto pool = std::make_shared<DeviceMemoryResource>(
        owner, DeviceMemoryResourceOptions{.ipc_enabled = true});
    EXPECT_TRUE(pool->peer_accessible_by().empty());
    Stream owner_stream = owner.create_stream();
    Buffer data = pool->allocate(4 * MiB, owner_stream);
    write_pattern(code, data, owner_stream, 7, 3);
    owner_stream.sync();

    // The owner in the list is an error, as the driver says (it always has access).
    try {
        pool->set_peer_accessible_by({reader, owner});
        ADD_FAILURE() << "the pool's own device was accepted in its access list";
    } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("own device"), std::string::npos) << e.what();
    }
    EXPECT_EQ(pool->access_of(owner), MemoryAccess::read_write);
    pool->set_peer_accessible_by({reader});
    const auto accessible = pool->peer_accessible_by();
    ASSERT_EQ(accessible.size(), 1u);
    EXPECT_EQ(accessible[0], reader);
    Stream reader_stream = reader.create_stream();
    EXPECT_EQ(mismatches(code, data, reader_stream, 7, 3), 0u);  // a kernel on device 0

    // Read-only (CU_MEM_ACCESS_FLAGS_PROT_READ): driver 580 refuses it for memory pools ("Mempools
    // do not support Read-Only flag"); where a driver takes it, the reader's kernel still reads.
    try {
        pool->set_access({reader}, MemoryAccess::read);
        EXPECT_EQ(pool->access_of(reader), MemoryAccess::read);
        EXPECT_TRUE(pool->peer_accessible_by().empty());  // read-write only
        EXPECT_EQ(mismatches(code, data, reader_stream, 7, 3), 0u);
    } catch (const DriverError& e) {
        EXPECT_EQ(e.status(), CUDA_ERROR_NOT_SUPPORTED) << e.what();
        EXPECT_NE(std::string(e.what()).find("read-only"), std::string::npos) << e.what();
        EXPECT_EQ(pool->access_of(reader), MemoryAccess::read_write) << "left as it was";
    }
    EXPECT_THROW(pool->set_access({owner}, MemoryAccess::read), InvalidArgumentError);

    pool->set_peer_accessible_by({});
    EXPECT_TRUE(pool->peer_accessible_by().empty());
    EXPECT_EQ(pool->access_of(reader), MemoryAccess::none) << "left out: no access at all";
    data.close(owner_stream);
    owner_stream.sync();
}

TEST(MultiDeviceGpu, OneGibCopiesBetweenDevicesStagedThenPeer) {
    REQUIRE_TWO_GPUS();
    const Device a(0), b(1);
    const ObjectCode code = test::compile_multi_gpu_kernels(a);
    const std::size_t size = 1024 * MiB;
    Stream stream_a = a.create_stream();
    Stream stream_b = b.create_stream();
    Buffer source = a.allocate(size, stream_a);
    Buffer destination = b.allocate(size, stream_b);
    write_pattern(code, source, stream_a, 2654435761u, 17);
    destination.fill_byte(0, stream_b);
    stream_a.sync();
    stream_b.sync();

    a.disable_peer_access(b);
    b.disable_peer_access(a);
    EXPECT_EQ(copy_path(destination, source), CopyPath::staged);
    EXPECT_EQ(copy_between_devices(destination, source, stream_a), CopyPath::staged);
    stream_a.sync();
    EXPECT_EQ(mismatches(code, destination, stream_b, 2654435761u, 17), 0u);

    if (!b.can_access_peer(a)) GTEST_SKIP() << "staged copy verified; no peer path on this pair";
    b.enable_peer_access(a);
    // Pool memory: device 1 also needs access to device 0's pool for the direct path.
    auto source_pool = std::dynamic_pointer_cast<DeviceMemoryResource>(a.memory_resource());
    ASSERT_TRUE(source_pool);
    source_pool->set_peer_accessible_by({b});
    destination.fill_byte(0, stream_b);
    EXPECT_EQ(copy_between_devices(destination, source, stream_b), CopyPath::peer);
    EXPECT_EQ(mismatches(code, destination, stream_b, 2654435761u, 17), 0u);
    source_pool->set_peer_accessible_by({});  // the default pool as it was
    b.disable_peer_access(a);
}

TEST(MultiDeviceGpu, CopiesCheckSizesAndWorkOnOneDevice) {
    CUDACORE_REQUIRE_GPU();
    const Device device(0);
    const ObjectCode code = test::compile_multi_gpu_kernels(device);
    Stream stream = device.create_stream();
    Buffer small = device.allocate(MiB, stream);
    Buffer large = device.allocate(2 * MiB, stream);
    try {
        copy_between_devices(large, small, stream);
        FAIL() << "sizes were not checked";
    } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("sizes differ"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("1048576 bytes"), std::string::npos) << e.what();
    }
    Buffer other = device.allocate(MiB, stream);
    write_pattern(code, small, stream, 5, 1);
    EXPECT_EQ(copy_between_devices(other, small, stream), CopyPath::same_device);
    EXPECT_EQ(mismatches(code, other, stream, 5, 1), 0u);
    if (Device::count() >= 2) {
        Stream other_stream = Device(1).create_stream();
        Buffer wrong = Device(1).allocate(2 * MiB, other_stream);
        EXPECT_THROW(copy_between_devices(wrong, small, stream), InvalidArgumentError);
        other_stream.sync();
    }
}

}  // namespace
