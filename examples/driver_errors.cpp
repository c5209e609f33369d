// The driver's own words in an error: an allocation the driver refuses throws DriverError, whose
// message ends with what the driver logged for that call (CUDA 12.9 and later), also available
// line by line from driver_log().
#include <cudacore/cudacore.hpp>

#include <cstddef>
#include <cstdio>
#include <string>

int main() try {
    using namespace cudacore;
    if (!system::driver_available() || system::device_count() == 0) {
        std::printf("skipped: no CUDA driver or GPU on this machine\n");
        return 0;
    }
    Device device(0);
    Stream stream = device.create_stream();
    try {
        Buffer huge = device.allocate(std::size_t{1} << 50, stream);  // 1 PiB: refused
        std::printf("wrong: a 1 PiB allocation succeeded\n");
        return 1;
    } catch (const DriverError& error) {
        std::printf("%s\n", error.what());
        for (const std::string& line : error.driver_log()) {
            std::printf("  driver: %s\n", line.c_str());
            if (std::string(error.what()).find(line) == std::string::npos) {
                std::printf("wrong: the message does not quote the driver's line\n");
                return 1;
            }
        }
        std::printf("%s: %zu line(s) from the driver's log\n", error.status_name().c_str(),
                    error.driver_log().size());
    }
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
}
