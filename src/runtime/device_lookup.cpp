// A device found by its PCI bus id, and its free and total memory as the driver counts them.
#include "cudacore/device.hpp"

#include "cudacore/errors.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"

#include <cctype>

namespace cudacore {

namespace {

// The longest PCI bus id the driver writes ("dddddddd:bb:dd.f" with a wide domain) is well under
// this; more is not an id.
constexpr std::size_t kMaxPciBusIdLength = 64;

// Refuses, before the driver, what cannot be a PCI bus id.
void check_pci_bus_id(const std::string& id) {
    const char* call = "Device::from_pci_bus_id";
    if (id.empty())
        throw InvalidArgumentError(std::string(call) + ": the PCI bus id is empty (expected "
                                                       "\"domain:bus:device.function\", e.g. \"0000:18:00.0\")");
    if (id.size() > kMaxPciBusIdLength)
        throw InvalidArgumentError(std::string(call) + ": the PCI bus id is " +
                                   std::to_string(id.size()) + " characters long; at most " +
                                   std::to_string(kMaxPciBusIdLength) + " make one");
    for (const char c : id) {
        if (std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.') continue;
        throw InvalidArgumentError(std::string(call) + ": \"" + id +
                                   "\" is not a PCI bus id: only hexadecimal digits, ':' and '.' "
                                   "make one (e.g. \"0000:18:00.0\")");
    }
}

}  // namespace

Device Device::from_pci_bus_id(const std::string& pci_bus_id) {
    check_pci_bus_id(pci_bus_id);
    CUdevice handle = 0;
    const CUresult status = detail::driver().cuDeviceGetByPCIBusId(&handle, pci_bus_id.c_str());
    if (status == CUDA_ERROR_INVALID_VALUE || status == CUDA_ERROR_INVALID_DEVICE ||
        status == CUDA_ERROR_NO_DEVICE) {
        std::string present;
        for (const Device& device : all())
            present += (present.empty() ? "" : ", ") + device.pci_bus_id();
        throw InvalidArgumentError("Device::from_pci_bus_id: no device has the PCI bus id \"" +
                                   pci_bus_id + "\" (cuDeviceGetByPCIBusId: " +
                                   driver_status_name(status) + "); devices present: " +
                                   (present.empty() ? "none" : present));
    }
    detail::check(status, "cuDeviceGetByPCIBusId", "PCI bus id \"" + pci_bus_id + "\"");
    return from_handle(handle);
}

DeviceMemoryInfo Device::memory_info() const {
    Context primary = context();
    detail::ContextScope scope(*detail::box_of(primary));
    DeviceMemoryInfo info;
    detail::check(detail::driver().cuMemGetInfo(&info.free_bytes, &info.total_bytes), "cuMemGetInfo",
                  [&] { return "device " + std::to_string(ordinal_); });
    return info;
}

}  // namespace cudacore
