// CCCL interop on a real GPU (compiled by nvcc: Thrust and CUB algorithms are CUDA code): Thrust
// sorts on a cudacore stream with its temporaries from a cudacore memory resource, CUB sorts with
// temporary storage from the cuda::mr adaptor, Buffers are the spans the algorithms read, and
// streams round-trip through cuda::stream_ref.
#include "cudacore/cccl.hpp"  // first: it enables CCCL's cuda::mr concepts
#include "cudacore/cccl_thrust_allocator.hpp"
#include "test_support.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/device_memory_resource.hpp"
#include "cudacore/legacy_pinned_memory_resource.hpp"

#include <cub/device/device_radix_sort.cuh>
#include <thrust/device_ptr.h>
#include <thrust/execution_policy.h>
#include <thrust/sort.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

namespace {

using namespace cudacore;

std::vector<int> random_keys(std::size_t n) {
    std::mt19937 generator(1234);
    std::uniform_int_distribution<int> distribution(-1000000, 1000000);
    std::vector<int> keys(n);
    for (auto& key : keys) key = distribution(generator);
    return keys;
}

// Counts what Thrust asks of the cudacore allocator (so the test sees it was used).
struct CountingAllocator {
    using value_type = char;
    cccl::thrust_allocator<DeviceMemoryResource> inner;
    int* allocations;
    char* allocate(std::ptrdiff_t bytes) {
        ++*allocations;
        return inner.allocate(bytes);
    }
    void deallocate(char* pointer, std::size_t bytes) { inner.deallocate(pointer, bytes); }
};

TEST(CcclGpu, ThrustSortOnACudacoreResourceAndStream) {
    CUDACORE_REQUIRE_GPU();
    const Device device(0);
    device.set_current();
    const Stream stream = device.create_stream();
    auto resource = std::make_shared<DeviceMemoryResource>(device);
    cccl::resource_adaptor<DeviceMemoryResource> mr(resource, stream);

    constexpr std::size_t n = 1 << 20;
    std::vector<int> keys = random_keys(n);
    Buffer buffer = device.allocate(n * sizeof(int), stream);
    buffer.copy_from(keys, stream);
    const auto span = cccl::as_span<int>(buffer);
    ASSERT_EQ(span.size(), n);

    int allocations = 0;
    CountingAllocator allocator{cccl::thrust_allocator<DeviceMemoryResource>(mr, stream),
                                &allocations};
    thrust::sort(thrust::cuda::par_nosync(allocator).on(stream.handle()),
                 thrust::device_pointer_cast(span.data()),
                 thrust::device_pointer_cast(span.data() + span.size()));
    std::vector<int> sorted(n);
    buffer.copy_to(sorted, stream);
    stream.sync();
    std::sort(keys.begin(), keys.end());
    EXPECT_EQ(sorted, keys);
    EXPECT_GT(allocations, 0) << "Thrust took no temporary storage from the cudacore resource";
    EXPECT_THROW(allocator.inner.allocate(-1), InvalidArgumentError);
}

TEST(CcclGpu, CubSortWithTemporaryStorageFromTheAdaptor) {
    CUDACORE_REQUIRE_GPU();
    const Device device(0);
    device.set_current();
    const Stream stream = device.create_stream();
    cccl::resource_adaptor<DeviceMemoryResource> mr(std::make_shared<DeviceMemoryResource>(device),
                                                    stream);
    constexpr std::size_t n = 100000;
    std::vector<int> keys = random_keys(n);
    Buffer in = device.allocate(n * sizeof(int), stream);
    Buffer out = device.allocate(n * sizeof(int), stream);
    in.copy_from(keys, stream);

    const auto ref = cccl::to_stream_ref(stream);
    std::size_t temp_bytes = 0;
    ASSERT_EQ(cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, cccl::as_span<int>(in).data(),
                                             cccl::as_span<int>(out).data(), static_cast<int>(n),
                                             0, 32, ref.get()),
              cudaSuccess);
    void* temp = mr.allocate_async(temp_bytes, 256, ref);
    ASSERT_EQ(cub::DeviceRadixSort::SortKeys(temp, temp_bytes, cccl::as_span<int>(in).data(),
                                             cccl::as_span<int>(out).data(), static_cast<int>(n),
                                             0, 32, ref.get()),
              cudaSuccess);
    mr.deallocate_async(temp, temp_bytes, 256, ref);
    std::vector<int> sorted(n);
    out.copy_to(sorted, stream);
    stream.sync();
    std::sort(keys.begin(), keys.end());
    EXPECT_EQ(sorted, keys);
}

TEST(CcclGpu, StreamRefRoundTripAndSynchronousHostAllocation) {
    CUDACORE_REQUIRE_GPU();
    const Device device(0);
    const Stream stream = device.create_stream();
    const Stream back = cccl::from_stream_ref(cccl::to_stream_ref(stream));
    EXPECT_EQ(back.handle(), stream.handle());
    EXPECT_FALSE(back.owns_handle());

    cccl::resource_adaptor<LegacyPinnedMemoryResource> pinned(
        std::make_shared<LegacyPinnedMemoryResource>(device));
    auto* host = static_cast<std::uint32_t*>(pinned.allocate(4096));
    ASSERT_NE(host, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(host) % 256, 0u);
    host[0] = 0xC0FFEEu;  // host-accessible at once
    EXPECT_EQ(host[0], 0xC0FFEEu);
    pinned.deallocate(host, 4096);
    EXPECT_THROW(pinned.allocate(64, 4096), InvalidArgumentError);
}

}  // namespace
