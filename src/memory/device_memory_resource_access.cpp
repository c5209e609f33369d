// Which devices may reach a memory pool's allocations, and how (cuMemPoolGetAccess /
// cuMemPoolSetAccess): read-write, read-only or not at all.
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

CUmemAccess_flags flags_of(MemoryAccess access) {
    switch (access) {
        case MemoryAccess::read: return CU_MEM_ACCESS_FLAGS_PROT_READ;
        case MemoryAccess::read_write: return CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        case MemoryAccess::none: break;
    }
    return CU_MEM_ACCESS_FLAGS_PROT_NONE;
}

const char* name_of(CUmemAccess_flags flags) {
    return flags == CU_MEM_ACCESS_FLAGS_PROT_NONE   ? " (none)"
           : flags == CU_MEM_ACCESS_FLAGS_PROT_READ ? " (read-only)"
                                                    : " (read-write)";
}
// The devices listed, each once, with `flags`.
std::vector<CUmemAccessDesc> access_list(const std::vector<Device>& devices, CUmemAccess_flags flags) {
    std::vector<CUmemAccessDesc> changes;
    for (const Device& device : devices)
        if (std::none_of(changes.begin(), changes.end(), [&](const CUmemAccessDesc& d) {
                return d.location.id == device.ordinal();
            }))
            changes.push_back({device_location(device.ordinal()), flags});
    return changes;
}

}  // namespace

MemoryAccess DeviceMemoryResource::access_of(const Device& device) const {
    if (device.ordinal() == ordinal_) return MemoryAccess::read_write;
    CUmemLocation location = device_location(device.ordinal());
    CUmemAccess_flags flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
    detail::check(detail::driver().cuMemPoolGetAccess(&flags, pool_, &location),
                  "cuMemPoolGetAccess", [&] {
                      return "access of device " + std::to_string(device.ordinal()) + " to " +
                             description();
                  });
    return flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE ? MemoryAccess::read_write
           : flags == CU_MEM_ACCESS_FLAGS_PROT_READ    ? MemoryAccess::read
                                                       : MemoryAccess::none;
}

std::vector<Device> DeviceMemoryResource::peer_accessible_by() const {
    std::vector<Device> out;
    for (const Device& device : Device::all())
        if (device.ordinal() != ordinal_ && access_of(device) == MemoryAccess::read_write)
            out.push_back(device);
    return out;
}

// One cuMemPoolSetAccess for every change; the pool's own device and unreachable devices are
// refused before the driver is asked.
void DeviceMemoryResource::apply_access(std::vector<CUmemAccessDesc>& changes, const char* call) {
    const Device owner(ordinal_);
    for (const CUmemAccessDesc& change : changes) {
        if (change.location.id == ordinal_)
            throw InvalidArgumentError(
                std::string(call) + ": device " + std::to_string(ordinal_) + " is " +
                description() + "'s own device: it always has read-write access, and the driver "
                "refuses it in an access list (CUDA_ERROR_INVALID_DEVICE); list other devices only");
        if (change.flags != CU_MEM_ACCESS_FLAGS_PROT_NONE &&
            !Device(change.location.id).can_access_peer(owner))
            throw DriverError(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, "cuDeviceCanAccessPeer",
                              "device " + std::to_string(change.location.id) +
                                  " cannot reach memory of device " + std::to_string(ordinal_) +
                                  ", so it cannot be given access to " + description());
    }
    if (changes.empty()) return;
    detail::check(detail::driver().cuMemPoolSetAccess(pool_, changes.data(), changes.size()),
                  "cuMemPoolSetAccess", [&] {
                      std::string text = "access to " + description() + " for device(s)";
                      for (const auto& change : changes)
                          text += " " + std::to_string(change.location.id) + name_of(change.flags);
                      return text;
                  });
}

void DeviceMemoryResource::set_peer_accessible_by(const std::vector<Device>& devices) {
    // Every listed device is set, also one cuMemPoolGetAccess reports as set already: setting is
    // idempotent, and a pool imported from another process needs this process's own setting.
    std::vector<CUmemAccessDesc> changes =
        access_list(devices, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    for (const Device& device : Device::all())
        if (device.ordinal() != ordinal_ &&
            std::find(devices.begin(), devices.end(), device) == devices.end() &&
            access_of(device) != MemoryAccess::none)
            changes.push_back({device_location(device.ordinal()), CU_MEM_ACCESS_FLAGS_PROT_NONE});
    apply_access(changes, "DeviceMemoryResource::set_peer_accessible_by");
}

void DeviceMemoryResource::set_access(const std::vector<Device>& devices, MemoryAccess access) {
    std::vector<CUmemAccessDesc> changes = access_list(devices, flags_of(access));
    apply_access(changes, "DeviceMemoryResource::set_access");
}

}  // namespace cudacore
