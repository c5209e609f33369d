// Calls every memory entry point that needs the driver, with none present, and prints how each
// failed; then drops its buffers (which must not need the driver).
#include "empty_stream.hpp"
#include "expect_no_driver.hpp"
#include "host_memory_resource.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/managed_memory_resource.hpp"
#include "cudacore/legacy_pinned_memory_resource.hpp"
#include "cudacore/stream.hpp"
#include "support/box_access.hpp"

#include <cstdio>
#include <functional>
#include <vector>

int main() {
    const auto probe = cudacore::test::expect_no_driver;
    using cudacore::Buffer;
    // A stream object with no driver stream behind it (copies refuse an empty one before any
    // driver call): the calls below reach the driver, which is not there.
    const auto stream = cudacore::test::fake_stream(0);
    auto resource = std::make_shared<cudacore::test::HostMemoryResource>();
    {
        Buffer a = resource->allocate(64, stream);
        Buffer b = resource->allocate(64, stream);
        std::vector<char> host(64);
        probe("LegacyPinnedMemoryResource()", [] { cudacore::LegacyPinnedMemoryResource resource; });
        probe("ManagedMemoryResource()", [] { cudacore::ManagedMemoryResource resource; });
        probe("Buffer::wrap_unowned", [&] { Buffer::wrap_unowned(host.data(), host.size()); });
        probe("Buffer::from_handle(owner)", [&] {
            Buffer::from_handle(host.data(), host.size(), nullptr, std::make_shared<int>(0));
        });
        probe("Buffer::copy_from(host)", [&] { a.copy_from(host, stream); });
        probe("Buffer::copy_to(host)", [&] { a.copy_to(host, stream); });
        probe("Buffer::copy_from(Buffer)", [&] { a.copy_from(b, stream); });
        probe("Buffer::fill_byte", [&] { a.fill_byte(1, stream); });
        probe("Buffer::fill_uint32", [&] { a.fill_uint32(1, stream); });
        probe("Buffer::device", [&] { a.device(); });
        probe("prefetch_to_host", [&] { cudacore::prefetch(a, cudacore::MemoryLocation::host(), stream); });
        a.close();
    }
    std::printf("buffers released: %d of %d\n", resource->frees.load(),
                resource->allocations.load());
    return resource->frees.load() == 2 ? 0 : 1;
}
