// VirtualAddressRange: reserved addresses of the virtual memory parts.
#include "cudacore/virtual_address_range.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "memory/vmm/virtual_memory_boxes.hpp"
#include "memory/vmm/virtual_memory_checks.hpp"
#include "runtime/release/release.hpp"
#include "support/box_access.hpp"

#include <cstdio>

namespace cudacore {

namespace detail {

VirtualAddressRangeBox::~VirtualAddressRangeBox() {
    if (!handle || !context) return;
    const DriverApi* api = driver_for_release(*context);
    if (!api) return;
    check_release(api->cuMemAddressFree(handle, size), "cuMemAddressFree",
                  [&] { return describe_address_range(handle, size); });
}

std::string describe_address_range(CUdeviceptr address, std::size_t size) {
    char text[96];
    std::snprintf(text, sizeof text, "address range of %zu bytes at 0x%llx", size,
                  static_cast<unsigned long long>(address));
    return text;
}

}  // namespace detail

VirtualAddressRange VirtualAddressRange::reserve(const Device& device, std::size_t size,
                                                 const VirtualAddressRangeOptions& options) {
    detail::check_reserve(size, options.alignment);
    const detail::DriverApi& api = detail::driver();
    auto box = std::make_shared<detail::VirtualAddressRangeBox>();
    // The context the driver reserves in, held for the release.
    box->context = detail::primary_context(device.ordinal());
    detail::ContextScope scope(*box->context);
    CUdeviceptr address = 0;
    detail::check(api.cuMemAddressReserve(&address, size, options.alignment, options.fixed_address, 0),
                  "cuMemAddressReserve", [&] {
                      return std::to_string(size) + " bytes of addresses (alignment " +
                             std::to_string(options.alignment) + ") through device " +
                             std::to_string(device.ordinal());
                  });
    box->handle = address;
    box->size = size;
    return detail::BoxAccess::make<VirtualAddressRange>(std::move(box));
}

VirtualAddressRange VirtualAddressRange::reserve(std::size_t size, const VirtualAddressRangeOptions& options) {
    detail::check_reserve(size, options.alignment);
    CUcontext current = nullptr;
    detail::check(detail::driver().cuCtxGetCurrent(&current), "cuCtxGetCurrent");
    if (!current)
        throw InvalidArgumentError(
            "VirtualAddressRange::reserve: no context is current on the calling thread, so no device "
            "was named for the " + std::to_string(size) +
            " bytes of addresses: use VirtualAddressRange::reserve(device, size)");
    return reserve(Device::current(), size, options);
}

std::size_t VirtualAddressRange::size() const noexcept { return box() ? box()->size : 0; }

std::string VirtualAddressRange::description() const {
    if (box()) return detail::describe_address_range(box()->handle, box()->size);
    return is_closed() ? closed_description() : "empty VirtualAddressRange";
}

void VirtualAddressRange::close() {
    if (box()) close_as(description());
}

}  // namespace cudacore
