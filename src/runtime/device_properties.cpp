#include "cudacore/device_properties.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/system.hpp"
#include "loader/driver_api.hpp"

#include <map>
#include <memory>
#include <mutex>

namespace cudacore {

namespace {

DeviceProperties read_properties(CUdevice device, int ordinal) {
    const auto& api = detail::driver();
    DeviceProperties properties;
    int value = 0;
    // An attribute newer than the driver is CUDA_ERROR_INVALID_VALUE: keep the default.
#define CUDACORE_DEVICE_PROPERTY(attribute, member, type)                                      \
    if (api.cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_##attribute, device) ==          \
        CUDA_SUCCESS) {                                                                        \
        properties.member = static_cast<type>(value);                                          \
    }
#include "cudacore/device_property_list.inc"
#undef CUDACORE_DEVICE_PROPERTY
    // One attribute every driver knows: if even this fails, the device is unusable; say so.
    detail::check(api.cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_WARP_SIZE, device),
                  "cuDeviceGetAttribute", "device " + std::to_string(ordinal));
    return properties;
}

}  // namespace

const DeviceProperties& Device::properties() const {
    // Leaked on purpose: references handed out stay valid in static destructors.
    static auto* cache = new std::map<int, std::unique_ptr<const DeviceProperties>>();
    static auto* mutex = new std::mutex();
    std::lock_guard<std::mutex> lock(*mutex);
    auto& slot = (*cache)[ordinal_];
    if (!slot) slot = std::make_unique<const DeviceProperties>(read_properties(handle_, ordinal_));
    return *slot;
}

}  // namespace cudacore
