// reset_primary_context (primary_context.hpp): defined in the memory layer because the device's
// default memory resource, which this layer keeps for the process, holds the primary context
// without being a user's object, and a reset must not count it.
#include "cudacore/primary_context.hpp"

#include "cudacore/errors.hpp"
#include "memory/default_resource_holds.hpp"
#include "runtime/context_holders.hpp"
#include "runtime/runtime_handles.hpp"

namespace cudacore {

void reset_primary_context(const Device& device) {
    const auto& api = detail::driver();
    auto object = [&] { return "primary context of device " + std::to_string(device.ordinal()); };
    std::shared_ptr<detail::ContextBox> primary = detail::retained_primary_context(device.ordinal());
    if (primary) {
        // The registry's reference and this one are not holders; nor is an idle default resource.
        const long holders =
            primary.use_count() - 2 - detail::idle_default_resource_holds(*primary);
        if (holders > 0)
            throw InvalidArgumentError("reset_primary_context: refused: the " +
                                       detail::describe_primary_holders(*primary, holders) +
                                       "; a reset would destroy what they use: drop them first");
    }
    detail::check(api.cuDevicePrimaryCtxReset(device.handle()), "cuDevicePrimaryCtxReset", object);
    // The next use retains the new context; this one is released with its last holder.
    if (primary) detail::forget_primary_context(*primary);
}

}  // namespace cudacore
