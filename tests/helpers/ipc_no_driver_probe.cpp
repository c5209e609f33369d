// Calls the multi-device and IPC entry points that need the driver, with none present, and
// prints how each failed (NoDriverError expected); then the argument errors that must be caught
// before any driver call, printed as "NAME: InvalidArgumentError: ...".
#include "expect_no_driver.hpp"
#include "host_memory_resource.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/ipc.hpp"
#include "cudacore/peer_copy.hpp"
#include "support/box_access.hpp"

#include <unistd.h>

#include <cstdio>
#include <functional>

namespace {
void expect_invalid_argument(const char* name, const std::function<void()>& call) {
    try {
        call();
        std::printf("%s: UNEXPECTED success\n", name);
    } catch (const cudacore::InvalidArgumentError& e) {
        std::printf("%s: InvalidArgumentError: %s\n", name, e.what());
    } catch (const std::exception& e) {
        std::printf("%s: UNEXPECTED %s\n", name, e.what());
    }
}
}  // namespace

int main() {
    using namespace cudacore;
    const auto probe = test::expect_no_driver;
    const auto stream = detail::BoxAccess::empty<Stream>();
    auto resource = std::make_shared<test::HostMemoryResource>();
    Buffer a = resource->allocate(64, stream);
    Buffer b = resource->allocate(64, stream);
    Buffer small = resource->allocate(32, stream);

    probe("Device::count", [] { Device::count(); });
    probe("Device::all", [] { Device::all(); });
    probe("copy_between_devices", [&] { copy_between_devices(a, b, stream); });
    probe("import_event", [] { import_event(IpcEventDescriptor{}); });
    probe("import_memory_pool", [] {
        auto [x, y] = IpcChannel::pair();
        IpcPoolHandle handle;
        handle.fd = FileDescriptor(::dup(x.native_handle()));
        import_memory_pool(std::move(handle));
    });

    expect_invalid_argument("copy_between_devices(sizes)",
                            [&] { copy_between_devices(a, small, stream); });
    expect_invalid_argument("copy_between_devices(closed)", [&] {
        Buffer closed = resource->allocate(64, stream);
        closed.close();
        copy_between_devices(a, closed, stream);
    });
    expect_invalid_argument("export_buffer(host memory)", [&] { export_buffer(a); });
    expect_invalid_argument("import_buffer(no pool)",
                            [&] { import_buffer(std::shared_ptr<DeviceMemoryResource>(), IpcBufferDescriptor{}, stream); });
    expect_invalid_argument("import_memory_pool(pinned descriptor)", [] {
        IpcPoolHandle handle;
        handle.descriptor.pinned = true;
        import_memory_pool(std::move(handle));
    });
    expect_invalid_argument("import_pinned_memory_pool(device descriptor)",
                            [] { import_pinned_memory_pool(IpcPoolHandle{}); });
    expect_invalid_argument("import_buffer(no pinned pool)", [&] {
        import_buffer(std::shared_ptr<PinnedMemoryPoolResource>(), IpcBufferDescriptor{}, stream);
    });
    expect_invalid_argument("import_memory_pool(no fd)",
                            [] { import_memory_pool(IpcPoolHandle{}); });
    return 0;
}
