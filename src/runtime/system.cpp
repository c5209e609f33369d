#include "cudacore/system.hpp"

#include "cudacore/device.hpp"
#include "loader/driver_api.hpp"

#include <atomic>

namespace cudacore::system {

bool driver_available() noexcept { return detail::driver_available(); }

int driver_version() { return detail::driver().driver_version; }

std::string driver_path() { return detail::driver().path; }

int device_count() {
    // A process's devices never change (CUDA_VISIBLE_DEVICES is read when the driver starts), and
    // every kernel made asks: the driver is asked once (again after a failure).
    static std::atomic<int> known{-1};
    if (const int count = known.load(std::memory_order_relaxed); count >= 0) [[likely]] return count;
    int count = 0;
    detail::check(detail::driver().cuDeviceGetCount(&count), "cuDeviceGetCount");
    known.store(count, std::memory_order_relaxed);
    return count;
}

std::vector<Device> devices() {
    std::vector<Device> out;
    const int count = device_count();
    out.reserve(count);
    for (int i = 0; i < count; ++i) out.emplace_back(i);
    return out;
}

int built_cuda_version() noexcept { return CUDA_VERSION; }

}  // namespace cudacore::system
