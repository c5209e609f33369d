// Which devices may reach a memory pool's allocations (cuMemPoolGetAccess / cuMemPoolSetAccess).
#include "cudacore/device.hpp"
#include "cudacore/device_memory_resource.hpp"
#include "cudacore/errors.hpp"
#include "runtime/runtime_handles.hpp"

#include <algorithm>

namespace cudacore {

namespace {
CUmemLocation device_location(int ordinal) {
    CUmemLocation location{};
    location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    location.id = ordinal;
    return location;
}
}  // namespace

std::vector<Device> DeviceMemoryResource::peer_accessible_by() const {
    const auto& api = detail::driver();
    std::vector<Device> out;
    for (const Device& device : Device::all()) {
        if (device.ordinal() == ordinal_) continue;
        CUmemLocation location = device_location(device.ordinal());
        CUmemAccess_flags flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
        detail::check(api.cuMemPoolGetAccess(&flags, pool_, &location), "cuMemPoolGetAccess",
                      [&] { return "access of device " + std::to_string(device.ordinal()) +
                                   " to " + description(); });
        if (flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE) out.push_back(device);
    }
    return out;
}

void DeviceMemoryResource::set_peer_accessible_by(const std::vector<Device>& devices) {
    const Device owner(ordinal_);
    const std::vector<Device> current = peer_accessible_by();
    auto listed = [](const std::vector<Device>& list, const Device& device) {
        return std::find(list.begin(), list.end(), device) != list.end();
    };
    std::vector<CUmemAccessDesc> changes;
    // Every listed device is set, also one cuMemPoolGetAccess reports as set already: setting is
    // idempotent, and a pool imported from another process needs this process's own setting.
    for (const Device& device : devices) {
        if (device == owner) continue;
        if (std::any_of(changes.begin(), changes.end(), [&](const CUmemAccessDesc& d) {
                return d.location.id == device.ordinal();
            }))
            continue;  // listed twice
        if (!device.can_access_peer(owner))
            throw DriverError(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, "cuDeviceCanAccessPeer",
                              "device " + std::to_string(device.ordinal()) +
                                  " cannot reach memory of device " + std::to_string(ordinal_) +
                                  ", so it cannot be given access to " + description());
        changes.push_back({device_location(device.ordinal()), CU_MEM_ACCESS_FLAGS_PROT_READWRITE});
    }
    for (const Device& device : current)
        if (!listed(devices, device))
            changes.push_back({device_location(device.ordinal()), CU_MEM_ACCESS_FLAGS_PROT_NONE});
    if (changes.empty()) return;
    detail::check(detail::driver().cuMemPoolSetAccess(pool_, changes.data(), changes.size()),
                  "cuMemPoolSetAccess", [&] {
                      std::string text = "access to " + description() + " for device(s)";
                      for (const auto& change : changes)
                          text += " " + std::to_string(change.location.id) +
                                  (change.flags == CU_MEM_ACCESS_FLAGS_PROT_NONE ? " (none)"
                                                                                 : " (read-write)");
                      return text;
                  });
}

}  // namespace cudacore
