// The hook through which the driver's linker enters the current device's primary context
// (code/driver_link_context.hpp), installed when the library is loaded: only the runtime's registry
// of primary contexts (retained until exit, forgotten after a reset) can give it.
#include "code/driver_link_context.hpp"

#include "cudacore/device.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"

namespace cudacore::detail {
namespace {

EnteredLinkContext enter_current_primary_context() {
    std::shared_ptr<ContextBox> context = box_of(Device::current().context());
    auto scope = std::make_shared<ContextScope>(*context);
    return {std::move(context), std::move(scope)};
}

}  // namespace
}  // namespace cudacore::detail

// Static initialisation: the hook is in place before any code of the library can link. Named
// (and kept by the static library's users through CMakeLists.txt's --undefined), so a static link
// keeps this object although nothing calls into it.
extern "C" const bool cudacore_driver_link_context_hook_installed = [] {
    cudacore::detail::set_driver_link_context_hook(&cudacore::detail::enter_current_primary_context);
    return true;
}();
