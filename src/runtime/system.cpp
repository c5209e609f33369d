#include "cudacore/system.hpp"

#include "cudacore/device.hpp"
#include "loader/device_queries.hpp"
#include "loader/driver_api.hpp"

#include <atomic>

namespace cudacore::system {

bool driver_available() noexcept { return detail::driver_available(); }

int driver_version() { return detail::driver().driver_version; }

std::string driver_path() { return detail::driver().path; }

int device_count() { return detail::device_count(); }

std::vector<Device> devices() {
    std::vector<Device> out;
    const int count = device_count();
    out.reserve(count);
    for (int i = 0; i < count; ++i) out.emplace_back(i);
    return out;
}

int built_cuda_version() noexcept { return CUDA_VERSION; }

}  // namespace cudacore::system
