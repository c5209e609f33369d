// Calls every runtime entry point that needs the driver and prints how each failed.
#include "expect_no_driver.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/system.hpp"

#include <cstdio>
#include <functional>

int main() {
    const auto probe = cudacore::test::expect_no_driver;
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
