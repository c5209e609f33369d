// Calls every runtime entry point that needs the driver and prints how each failed.
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/system.hpp"

#include <cstdio>
#include <functional>

int main() {
    auto probe = [](const char* name, const std::function<void()>& call) {
        try {
            call();
            std::printf("%s: UNEXPECTED success\n", name);
        } catch (const cudacore::NoDriverError& e) {
            std::printf("%s: NoDriverError: %s\n", name, e.what());
        } catch (const std::exception& e) {
            std::printf("%s: UNEXPECTED %s\n", name, e.what());
        }
    };
    std::printf("driver_available: %s\n", cudacore::system::driver_available() ? "true" : "false");
    probe("system::driver_version", [] { cudacore::system::driver_version(); });
    probe("system::driver_path", [] { cudacore::system::driver_path(); });
    probe("system::device_count", [] { cudacore::system::device_count(); });
    probe("system::devices", [] { cudacore::system::devices(); });
    probe("Device(0)", [] { cudacore::Device device(0); });
    probe("Device::current", [] { cudacore::Device::current(); });
    probe("Stream::from_handle", [] { cudacore::Stream::from_handle(nullptr); });
    return 0;
}
