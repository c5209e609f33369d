#include "cudacore/managed_memory_resource.hpp"

#include "memory/buffer_box.hpp"
#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/device_memory_resource.hpp"
#include "cudacore/legacy_pinned_memory_resource.hpp"
#include "cudacore/errors.hpp"
#include "memory/free_after_stream.hpp"
#include "memory/managed_advice.hpp"
#include "cudacore/stream.hpp"
#include "support/box_access.hpp"

#include <optional>

namespace cudacore {

ManagedMemoryResource::ManagedMemoryResource(const Device& device)
    : BuiltinMemoryResource(device.ordinal()),
      context_(detail::BoxAccess::make<Context>(detail::primary_context(device.ordinal()))) {}

ManagedMemoryResource::ManagedMemoryResource() : ManagedMemoryResource(Device(0)) {}

ManagedMemoryResource::ManagedMemoryResource(const Device& device,
                                             const ManagedMemoryResourceOptions& options)
    : BuiltinMemoryResource(device.ordinal()),
      context_(detail::BoxAccess::make<Context>(detail::primary_context(device.ordinal()))),
      options_(options) {
    if (options.attach == ManagedAttach::single)
        throw InvalidArgumentError(
            "ManagedMemoryResource: attach = single is not an allocation's attachment (the driver "
            "takes global or host); allocate, then attach(buffer, ManagedAttach::single, stream)");
}

ManagedMemoryResource::~ManagedMemoryResource() = default;

std::string ManagedMemoryResource::description() const {
    return "managed memory through device " + std::to_string(ordinal_);
}

CUdeviceptr ManagedMemoryResource::do_allocate(std::size_t size, CUstream) {
    detail::ContextScope scope(*detail::box_of(context_));
    CUdeviceptr pointer = 0;
    const unsigned attach =
        options_.attach == ManagedAttach::host ? CU_MEM_ATTACH_HOST : CU_MEM_ATTACH_GLOBAL;
    detail::check(detail::driver().cuMemAllocManaged(&pointer, size, attach),
                  "cuMemAllocManaged",
                  [&] { return std::to_string(size) + " bytes of " + description(); });
    if (options_.preferred_location || options_.read_mostly) [[unlikely]]
        detail::apply_managed_options(pointer, size, options_, [&] { return description(); });
    return pointer;
}

void ManagedMemoryResource::do_deallocate(CUdeviceptr pointer, std::size_t size, CUstream stream) {
    detail::free_after_stream(
        *detail::box_of(context_), stream, "cuMemFree",
        [&](const detail::DriverApi& api) { return api.cuMemFree(pointer); },
        [&] { return std::to_string(size) + " bytes of " + description(); });
}

namespace {
bool is_managed(const Buffer& buffer) {
    const MemoryResource* resource = buffer.memory_resource().get();
    if (dynamic_cast<const ManagedMemoryResource*>(resource)) return true;
    if (dynamic_cast<const DeviceMemoryResource*>(resource) ||
        dynamic_cast<const LegacyPinnedMemoryResource*>(resource))
        return false;
    if (buffer.size() == 0) return false;  // an empty buffer of some other resource
    // Other resources and wrapped memory: the driver knows.
    int managed = 0;
    if (detail::driver().cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                               buffer.handle()) != CUDA_SUCCESS)
        return false;
    return managed != 0;
}

void prefetch_to(const Buffer& buffer, CUmemLocation location, const Stream& stream,
                 const std::string& where) {
    stream.check_open("prefetch");
    if (buffer.is_closed())
        throw InvalidArgumentError("prefetch: " + buffer.description() + " is closed");
    // Refused before the driver's bare CUDA_ERROR_INVALID_VALUE: only managed memory migrates.
    if (!is_managed(buffer))
        throw InvalidArgumentError("prefetch: " + buffer.description() +
                                   " is not a managed-memory allocation (only memory from a "
                                   "ManagedMemoryResource or cuMemAllocManaged can be prefetched)");
    if (buffer.size() == 0) return;  // an empty buffer: nothing to migrate
    const auto& box = detail::box_of(stream);
    std::optional<detail::ContextScope> scope;
    if (box && box->context) scope.emplace(*box->context);
    detail::check(detail::driver().cuMemPrefetchAsync(buffer.handle(), buffer.size(), location, 0,
                                                      stream.handle()),
                  "cuMemPrefetchAsync", [&] { return buffer.description() + " to " + where; });
}
}  // namespace

void prefetch(const Buffer& buffer, const MemoryLocation& location, const Stream& stream) {
    prefetch_to(buffer, location.to_driver(), stream, location.description());
}

void prefetch(const Buffer& buffer, const Device& device, const Stream& stream) {
    prefetch(buffer, MemoryLocation::device(device.ordinal()), stream);
}

void prefetch_to_host(const Buffer& buffer, const Stream& stream) { prefetch(buffer, MemoryLocation::host(), stream); }

}  // namespace cudacore
