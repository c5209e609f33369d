// pointer_attributes on a GPU: device memory (pool and cuMemAlloc), pinned host memory, managed
// memory, slices and unknown addresses, each answered by one query; the device pointer of memory
// of a context, whichever context is current.
#include "test_support.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/buffer_slice.hpp"
#include "cudacore/context.hpp"
#include "cudacore/device.hpp"
#include "cudacore/device_memory_resource.hpp"
#include "cudacore/legacy_pinned_memory_resource.hpp"
#include "cudacore/managed_memory_resource.hpp"
#include "cudacore/pointer_attributes.hpp"
#include "cudacore/synchronous_memory_resource.hpp"
#include "loader/driver_api.hpp"

#include <cstdlib>
#include <memory>
#include <vector>

namespace {

using namespace cudacore;

// The range reported contains [pointer, pointer + size).
void expect_contains(const PointerAttributes& a, CUdeviceptr pointer, std::size_t size) {
    EXPECT_LE(a.range_start, pointer) << a.description();
    EXPECT_GE(a.range_start + a.range_size, pointer + size) << a.description();
}

TEST(PointerAttributesGpu, DeviceMemoryOfAPoolAndOfCuMemAlloc) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream stream = device.create_stream();
    Buffer pooled = device.allocate(1 << 20, stream);
    stream.sync();
    const PointerAttributes p = pointer_attributes(pooled.handle());
    EXPECT_EQ(p.memory_type, MemoryType::device) << p.description();
    EXPECT_TRUE(p.is_known());
    EXPECT_EQ(p.device_ordinal, 0);
    EXPECT_FALSE(p.is_managed);
    // Driver 580 answers no DEVICE_POINTER for pool memory (it has no context); where it does,
    // it is the address itself.
    EXPECT_TRUE(p.device_pointer == 0 || p.device_pointer == pooled.handle()) << p.description();
    expect_contains(p, pooled.handle(), pooled.size());
    if (device.attribute(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED)) {
        auto pool = std::dynamic_pointer_cast<DeviceMemoryResource>(device.memory_resource());
        ASSERT_TRUE(pool);
        EXPECT_EQ(p.pool, pool->pool()) << "the device's default pool";
    }

    auto plain = std::make_shared<SynchronousMemoryResource>(device);
    Buffer allocated = plain->allocate(1 << 16, stream);
    const PointerAttributes a = pointer_attributes(allocated.handle() + 100);
    EXPECT_EQ(a.memory_type, MemoryType::device);
    EXPECT_EQ(a.pool, nullptr) << "cuMemAlloc memory has no pool";
    EXPECT_NE(a.context, nullptr) << "cuMemAlloc memory belongs to a context";
    EXPECT_EQ(a.range_start, allocated.handle());
    EXPECT_EQ(a.range_size, allocated.size());
    EXPECT_EQ(a.offset_of(allocated.handle() + 100), 100u);
    EXPECT_TRUE(a.is_legacy_ipc_capable);
    EXPECT_NE(a.buffer_id, 0u);
}

// The driver answers DEVICE_POINTER for the current context (0 for memory of another one with
// none current); pointer_attributes answers for the memory's own context: the same answer with
// that context current, with none current and with another context current, which it leaves
// current.
TEST(PointerAttributesGpu, TheDevicePointerOfMemoryOfAContextIsItsOwnWhicheverIsCurrent) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    device.set_current();
    Stream stream = device.create_stream();
    auto plain = std::make_shared<SynchronousMemoryResource>(device);
    Buffer allocated = plain->allocate(1 << 16, stream);
    auto pinned_resource = std::make_shared<LegacyPinnedMemoryResource>(device);
    Buffer pinned = pinned_resource->allocate(4096, stream);
    const CUdeviceptr address = allocated.handle() + 64;
    const PointerAttributes own = pointer_attributes(address);
    const PointerAttributes pinned_own = pointer_attributes(pinned.data());
    ASSERT_NE(own.context, nullptr) << own.description();
    EXPECT_EQ(own.device_pointer, address) << own.description();
    EXPECT_NE(pinned_own.device_pointer, 0u) << pinned_own.description();

    const auto& api = detail::driver();
    CUcontext saved = nullptr;
    ASSERT_EQ(api.cuCtxGetCurrent(&saved), CUDA_SUCCESS);
    Context other = Context::create(device);
    for (const CUcontext current : {static_cast<CUcontext>(nullptr), other.handle()}) {
        ASSERT_EQ(api.cuCtxSetCurrent(current), CUDA_SUCCESS);
        const PointerAttributes a = pointer_attributes(address);
        const PointerAttributes h = pointer_attributes(pinned.data());
        SCOPED_TRACE(current ? "another context current" : "no context current");
        EXPECT_EQ(a.device_pointer, own.device_pointer) << a.description();
        EXPECT_EQ(a.context, own.context);
        if (pinned_own.context)  // pinned memory of a context (cuMemHostAlloc) is answered for it too
            EXPECT_EQ(h.device_pointer, pinned_own.device_pointer) << h.description();
        CUcontext after = nullptr;
        ASSERT_EQ(api.cuCtxGetCurrent(&after), CUDA_SUCCESS);
        EXPECT_EQ(after, current) << "the current context is left as it was";
    }
    ASSERT_EQ(api.cuCtxSetCurrent(saved), CUDA_SUCCESS);
}

TEST(PointerAttributesGpu, PinnedManagedAndSlicedMemory) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream stream = device.create_stream();
    auto pinned_resource = std::make_shared<LegacyPinnedMemoryResource>(device);
    Buffer pinned = pinned_resource->allocate(4096, stream);
    const PointerAttributes h = pointer_attributes(pinned.data());
    EXPECT_EQ(h.memory_type, MemoryType::host) << h.description();
    EXPECT_NE(h.host_pointer, nullptr);
    EXPECT_FALSE(h.is_managed);

    auto managed_resource = std::make_shared<ManagedMemoryResource>(device);
    Buffer managed = managed_resource->allocate(4096, stream);
    const PointerAttributes m = pointer_attributes(managed.handle());
    EXPECT_EQ(m.memory_type, MemoryType::managed) << m.description();
    EXPECT_TRUE(m.is_managed);

    auto plain = std::make_shared<SynchronousMemoryResource>(device);
    Buffer owner = plain->allocate(8192, stream);
    Buffer part = slice(owner, 4096, 1024);
    const PointerAttributes s = pointer_attributes(part.handle());
    EXPECT_EQ(s.memory_type, MemoryType::device);
    EXPECT_EQ(s.range_start, owner.handle()) << "a slice lies in its owner's allocation";
    EXPECT_EQ(s.range_size, owner.size());
    EXPECT_EQ(s.offset_of(part.handle()), 4096u);
}

TEST(PointerAttributesGpu, UnknownAddressesAreAnsweredAsUnregistered) {
    CUDACORE_REQUIRE_GPU();
    Device(0).set_current();
    std::vector<int> host(64);
    for (const void* pointer : {static_cast<const void*>(host.data()), static_cast<const void*>(nullptr)}) {
        const PointerAttributes u = pointer_attributes(pointer);
        EXPECT_EQ(u.memory_type, MemoryType::unregistered);
        EXPECT_FALSE(u.is_known());
        EXPECT_EQ(u.device_ordinal, -1);
        EXPECT_EQ(u.context, nullptr);
        EXPECT_EQ(u.range_size, 0u);
        EXPECT_NE(u.description().find("unregistered"), std::string::npos);
    }
    // A freed allocation is unknown again.
    Stream stream = Device(0).create_stream();
    auto plain = std::make_shared<SynchronousMemoryResource>(Device(0));
    Buffer gone = plain->allocate(4096, stream);
    const CUdeviceptr address = gone.handle();
    gone.close();
    EXPECT_FALSE(pointer_attributes(address).is_known());
}

}  // namespace
