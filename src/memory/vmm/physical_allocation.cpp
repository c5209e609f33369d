// PhysicalAllocation: physical memory of the virtual memory parts (the range is in
// virtual_address_range.cpp, the mapping between them in virtual_memory_mapping.cpp).
#include "cudacore/physical_allocation.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "memory/memory_option_checks.hpp"
#include "memory/vmm/virtual_memory_boxes.hpp"
#include "memory/vmm/virtual_memory_checks.hpp"
#include "runtime/release/release.hpp"
#include "support/box_access.hpp"

#include <cstdio>

namespace cudacore {

namespace detail {

PhysicalAllocationBox::~PhysicalAllocationBox() {
    if (!owned || !handle || !context) return;
    const DriverApi* api = driver_for_release(*context);
    if (!api) return;
    check_release(api->cuMemRelease(handle), "cuMemRelease",
                  [&] { return describe_physical_allocation(*this); });
}

std::string describe_physical_allocation(const PhysicalAllocationBox& box) {
    return std::string("physical allocation of ") + std::to_string(box.size) + " bytes" +
           (box.managed ? " (managed)" : "") + " on device " + std::to_string(box.ordinal);
}

namespace {

CUmemAllocationProp properties_of(int ordinal, CUdevice device,
                                  const PhysicalAllocationOptions& options) {
    // Options checked as VirtualMemoryResource's (the same properties).
    VirtualMemoryResourceOptions as_resource;
    as_resource.allocation_type = options.allocation_type;
    as_resource.handle_types = options.handle_types;
    as_resource.gpu_direct_rdma = options.gpu_direct_rdma;
    const Device of(ordinal);
    try {
        check_virtual_memory_options(as_resource, ordinal, [&](CUdevice_attribute attribute) {
            return of.attribute(attribute);
        });
    } catch (const InvalidArgumentError& e) {
        std::string text = e.what();
        const std::string prefix = "VirtualMemoryResource: ";
        if (text.rfind(prefix, 0) == 0) text = text.substr(prefix.size());
        throw InvalidArgumentError("PhysicalAllocationOptions: " + text);
    }
    CUmemAllocationProp properties{};
    properties.type = options.allocation_type == VirtualMemoryAllocationType::managed
                          ? CU_MEM_ALLOCATION_TYPE_MANAGED
                          : CU_MEM_ALLOCATION_TYPE_PINNED;
    properties.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    properties.location.id = device;
    properties.requestedHandleTypes = static_cast<CUmemAllocationHandleType>(options.handle_types);
    properties.allocFlags.gpuDirectRDMACapable = options.gpu_direct_rdma ? 1 : 0;
    return properties;
}

std::size_t granularity_of(const CUmemAllocationProp& properties, CUmemAllocationGranularity_flags which,
                           int ordinal) {
    std::size_t value = 0;
    check(driver().cuMemGetAllocationGranularity(&value, &properties, which),
          "cuMemGetAllocationGranularity", [&] { return "allocations of device " + std::to_string(ordinal); });
    return value;
}

}  // namespace

std::shared_ptr<PhysicalAllocationBox> adopt_physical_allocation(CUmemGenericAllocationHandle handle,
                                                                 std::size_t size, bool owned) {
    const DriverApi& api = driver();
    CUmemAllocationProp properties{};
    char text[64];
    std::snprintf(text, sizeof text, "allocation handle 0x%llx", static_cast<unsigned long long>(handle));
    check(api.cuMemGetAllocationPropertiesFromHandle(&properties, handle),
          "cuMemGetAllocationPropertiesFromHandle", text);
    const int ordinal = Device::from_handle(properties.location.id).ordinal();
    auto box = std::make_shared<PhysicalAllocationBox>();
    box->context = primary_context(ordinal);
    box->ordinal = ordinal;
    box->size = size;
    box->handle_types = static_cast<unsigned>(properties.requestedHandleTypes);
    box->managed = properties.type == CU_MEM_ALLOCATION_TYPE_MANAGED;
    box->granularity = granularity_of(properties, CU_MEM_ALLOC_GRANULARITY_MINIMUM, ordinal);
    box->handle = handle;
    box->owned = owned;
    return box;
}

}  // namespace detail

AllocationGranularity allocation_granularity(const Device& device,
                                             const PhysicalAllocationOptions& options) {
    const CUmemAllocationProp properties = detail::properties_of(device.ordinal(), device.handle(), options);
    return {detail::granularity_of(properties, CU_MEM_ALLOC_GRANULARITY_MINIMUM, device.ordinal()),
            detail::granularity_of(properties, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED, device.ordinal())};
}

PhysicalAllocation PhysicalAllocation::create(const Device& device, std::size_t size,
                                              const PhysicalAllocationOptions& options) {
    const std::string name = "device " + std::to_string(device.ordinal());
    if (size == 0) detail::check_physical_size(size, 0, name);
    const CUmemAllocationProp properties = detail::properties_of(device.ordinal(), device.handle(), options);
    auto box = std::make_shared<detail::PhysicalAllocationBox>();
    box->ordinal = device.ordinal();
    box->size = size;
    box->handle_types = options.handle_types;
    box->managed = options.allocation_type == VirtualMemoryAllocationType::managed;
    box->granularity = detail::granularity_of(properties, CU_MEM_ALLOC_GRANULARITY_MINIMUM, box->ordinal);
    detail::check_physical_size(size, box->granularity, name);
    box->context = detail::primary_context(box->ordinal);
    detail::ContextScope scope(*box->context);
    CUmemGenericAllocationHandle handle = 0;
    detail::check(detail::driver().cuMemCreate(&handle, size, &properties, 0), "cuMemCreate",
                  [&] { return describe_physical_allocation(*box); });
    box->handle = handle;
    return detail::BoxAccess::make<PhysicalAllocation>(std::move(box));
}

PhysicalAllocation PhysicalAllocation::from_handle(CUmemGenericAllocationHandle handle, std::size_t size,
                                                   const PhysicalAllocationFromHandleOptions& options) {
    if (!handle) throw InvalidArgumentError("PhysicalAllocation::from_handle: a null handle");
    if (size == 0) throw InvalidArgumentError("PhysicalAllocation::from_handle: size 0");
    return detail::BoxAccess::make<PhysicalAllocation>(
        detail::adopt_physical_allocation(handle, size, options.take_ownership));
}

std::size_t PhysicalAllocation::size() const noexcept { return box() ? box()->size : 0; }
int PhysicalAllocation::device_ordinal() const noexcept { return box() ? box()->ordinal : -1; }
std::size_t PhysicalAllocation::granularity() const noexcept { return box() ? box()->granularity : 0; }
unsigned PhysicalAllocation::handle_types() const noexcept { return box() ? box()->handle_types : 0; }
bool PhysicalAllocation::is_managed() const noexcept { return box() && box()->managed; }

std::string PhysicalAllocation::description() const {
    if (box()) return detail::describe_physical_allocation(*box());
    return is_closed() ? closed_description() : "empty PhysicalAllocation";
}

void PhysicalAllocation::close() {
    if (box()) close_as(description());
}

}  // namespace cudacore
