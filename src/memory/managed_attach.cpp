// attach(): managed memory attached to a stream, the host or every stream (cuStreamAttachMemAsync).
#include "cudacore/managed_attach.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/buffer_slice.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/stream.hpp"
#include "memory/buffer_box.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"
#include "support/enum_text.hpp"

#include <optional>

namespace cudacore {

std::string to_string(ManagedAttach attach) {
    static constexpr detail::EnumText<ManagedAttach> names[] = {
        {ManagedAttach::global, "global"},
        {ManagedAttach::host, "host"},
        {ManagedAttach::single, "single"},
    };
    return detail::enum_text(attach, names, "ManagedAttach");
}

namespace {
unsigned flags_of(ManagedAttach attach) {
    switch (attach) {
        case ManagedAttach::host: return CU_MEM_ATTACH_HOST;
        case ManagedAttach::single: return CU_MEM_ATTACH_SINGLE;
        case ManagedAttach::global: break;
    }
    return CU_MEM_ATTACH_GLOBAL;
}
}  // namespace

void attach(const Buffer& buffer, ManagedAttach attach, const Stream& stream) {
    stream.check_open("attach");
    if (buffer.is_closed())
        throw InvalidArgumentError("attach: " + buffer.description() + " is closed");
    if (!buffer.is_managed())
        throw InvalidArgumentError("attach: " + buffer.description() +
                                   " is not a managed-memory allocation (only memory from a "
                                   "ManagedMemoryResource or cuMemAllocManaged can be attached)");
    if (attach == ManagedAttach::single && stream.handle() == nullptr)
        throw InvalidArgumentError("attach: " + buffer.description() +
                                   " cannot be attached to the legacy default stream alone "
                                   "(single); use a stream of its own");
    if (buffer.size() == 0) return;
    // The driver attaches whole allocations (length 0): a slice's owner's start.
    const std::optional<SliceOrigin> origin = slice_origin(buffer);
    const CUdeviceptr start = origin ? origin->owner.handle() : buffer.handle();
    const auto& box = detail::box_of(stream);
    std::optional<detail::ContextScope> scope;
    if (box && box->context) scope.emplace(*box->context);
    detail::check(detail::driver().cuStreamAttachMemAsync(stream.handle(), start, 0, flags_of(attach)),
                  "cuStreamAttachMemAsync", [&] {
                      return buffer.description() + " attached " + to_string(attach);
                  });
}

}  // namespace cudacore
