// Calls every entry point of the virtual memory, pool, managed, registration, batched copy and
// 2-byte fill features with no driver present, and prints how each failed.
#include "expect_no_driver.hpp"
#include "host_memory_resource.hpp"

#include "cudacore/batched_copy.hpp"
#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/device_memory_resource.hpp"
#include "cudacore/managed_memory.hpp"
#include "cudacore/pinned_memory_pool_resource.hpp"
#include "cudacore/registered_host_memory.hpp"
#include "cudacore/stream.hpp"
#include "cudacore/synchronous_memory_resource.hpp"
#include "cudacore/virtual_memory_resource.hpp"
#include "support/box_access.hpp"

#include <cstdio>
#include <vector>

int main() {
    const auto probe = cudacore::test::expect_no_driver;
    using namespace cudacore;
    const auto stream = detail::BoxAccess::empty<Stream>();
    auto resource = std::make_shared<test::HostMemoryResource>();
    {
        Buffer a = resource->allocate(64, stream);
        Buffer b = resource->allocate(64, stream);
        std::vector<char> host(64);
        probe("VirtualMemoryResource()", [] { VirtualMemoryResource vmm(Device(0)); });
        probe("DeviceMemoryResource::create_owned_pool",
              [] { DeviceMemoryResource::create_owned_pool(Device(0)); });
        probe("PinnedMemoryPoolResource()", [] { PinnedMemoryPoolResource pool(Device(0)); });
        probe("SynchronousMemoryResource()", [] { SynchronousMemoryResource sync(Device(0)); });
        probe("register_host_memory",
              [&] { register_host_memory(host.data(), host.size(), Device(0)); });
        probe("Buffer::fill_uint16", [&] { a.fill_uint16(7, stream); });
        probe("copy_batch", [&] {
            const CopyPair copies[] = {{b, a}};
            copy_batch(copies, stream);
        });
        probe("advise", [&] { advise(a, ManagedAdvice::set_read_mostly); });
        probe("prefetch_batch", [&] {
            const Buffer buffers[] = {a, b};
            prefetch_batch(buffers, MemoryLocation::host(), stream);
        });
        probe("range_attributes", [&] { range_attributes(a); });
        probe("MemoryPool::attributes",
              [&] { MemoryPool(nullptr, "no pool", nullptr).attributes(); });
    }
    std::printf("buffers released: %d of %d\n", resource->frees.load(),
                resource->allocations.load());
    return resource->frees.load() == 2 ? 0 : 1;
}
