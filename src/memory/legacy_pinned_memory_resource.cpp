#include "cudacore/legacy_pinned_memory_resource.hpp"

#include "memory/buffer_box.hpp"
#include "support/box_access.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "memory/free_after_stream.hpp"

namespace cudacore {

LegacyPinnedMemoryResource::LegacyPinnedMemoryResource(const Device& device)
    : BuiltinMemoryResource(device.ordinal()),
      context_(detail::BoxAccess::make<Context>(detail::primary_context(device.ordinal()))) {}

// An object of its own over the context's box: closing the caller's Context leaves the resource
// its context.
LegacyPinnedMemoryResource::LegacyPinnedMemoryResource(const Context& context)
    : context_(detail::BoxAccess::make<Context>(detail::open_box_of(context, "LegacyPinnedMemoryResource"))) {
    ordinal_ = detail::box_of(context_)->ordinal;
}

LegacyPinnedMemoryResource::LegacyPinnedMemoryResource() : LegacyPinnedMemoryResource(Device(0)) {}

LegacyPinnedMemoryResource::~LegacyPinnedMemoryResource() = default;

std::string LegacyPinnedMemoryResource::description() const {
    return "pinned host memory through device " + std::to_string(ordinal_);
}

CUdeviceptr LegacyPinnedMemoryResource::do_allocate(std::size_t size, CUstream) {
    detail::ContextScope scope(*detail::box_of(context_));
    void* pointer = nullptr;
    detail::check(detail::driver().cuMemHostAlloc(
                      &pointer, size, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP),
                  "cuMemHostAlloc",
                  [&] { return std::to_string(size) + " bytes of " + description(); });
    return reinterpret_cast<CUdeviceptr>(pointer);
}

void LegacyPinnedMemoryResource::do_deallocate(CUdeviceptr pointer, std::size_t size, CUstream stream) {
    detail::free_after_stream(
        *detail::box_of(context_), stream, "cuMemFreeHost",
        [&](const detail::DriverApi& api) {
            return api.cuMemFreeHost(reinterpret_cast<void*>(pointer));
        },
        [&] { return std::to_string(size) + " bytes of " + description(); });
}

}  // namespace cudacore
