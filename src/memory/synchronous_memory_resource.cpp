#include "cudacore/synchronous_memory_resource.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "memory/buffer_box.hpp"
#include "memory/free_after_stream.hpp"
#include "support/box_access.hpp"

namespace cudacore {

SynchronousMemoryResource::SynchronousMemoryResource(const Device& device)
    : BuiltinMemoryResource(device.ordinal()),
      context_(detail::primary_context(device.ordinal())) {}

SynchronousMemoryResource::SynchronousMemoryResource(const Context& context)
    : context_(detail::open_box_of(context, "SynchronousMemoryResource")) {
    ordinal_ = context_->ordinal;
}

SynchronousMemoryResource::~SynchronousMemoryResource() = default;

std::string SynchronousMemoryResource::description() const {
    if (!context_->retained)
        return "synchronous device memory (cuMemAlloc) of " + detail::describe_context(*context_);
    return "synchronous device memory (cuMemAlloc) of device " + std::to_string(ordinal_);
}

CUdeviceptr SynchronousMemoryResource::do_allocate(std::size_t size, CUstream) {
    detail::ContextScope scope(*context_);
    CUdeviceptr pointer = 0;
    detail::check(detail::driver().cuMemAlloc(&pointer, size), "cuMemAlloc",
                  [&] { return std::to_string(size) + " bytes of " + description(); });
    return pointer;
}

void SynchronousMemoryResource::do_deallocate(CUdeviceptr pointer, std::size_t size,
                                              CUstream stream) {
    detail::free_after_stream(
        *context_, stream, "cuMemFree",
        [&](const detail::DriverApi& api) { return api.cuMemFree(pointer); },
        [&] { return std::to_string(size) + " bytes of " + description(); });
}

}  // namespace cudacore
