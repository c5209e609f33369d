// The driver linker's context (code/driver_link_context.hpp): the current device's primary
// context, current for the link. A crossing: the code layer declares it, and only the runtime's
// registry of primary contexts (kept retained until exit, forgotten after a reset) can give it.
#include "code/driver_link_context.hpp"

#include "cudacore/device.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"

namespace cudacore::detail {

struct DriverLinkContext::Scope {
    explicit Scope(const ContextBox& context) : scope(context) {}
    ContextScope scope;
};

DriverLinkContext::DriverLinkContext() {
    std::shared_ptr<ContextBox> context = detail::box_of(Device::current().context());
    scope_ = std::make_unique<Scope>(*context);
    context_ = std::move(context);
}

DriverLinkContext::~DriverLinkContext() = default;

}  // namespace cudacore::detail
