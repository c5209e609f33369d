// The driver linker's context (driver_link_context.hpp): entered through the hook the runtime
// installs.
#include "code/driver_link_context.hpp"

#include "cudacore/errors.hpp"

#include <atomic>

namespace cudacore::detail {

namespace {
std::atomic<DriverLinkContextHook> driver_link_context_hook{nullptr};
}  // namespace

void set_driver_link_context_hook(DriverLinkContextHook hook) noexcept {
    driver_link_context_hook.store(hook, std::memory_order_release);
}

DriverLinkContext::DriverLinkContext() {
    const DriverLinkContextHook hook = driver_link_context_hook.load(std::memory_order_acquire);
    // Only a static link that left the runtime out has none.
    if (!hook) throw Error("Linker::link (driver): no current device context: cudacore's runtime is not linked in");
    EnteredLinkContext entered = hook();
    context_ = std::move(entered.context);
    scope_ = std::move(entered.scope);
}

DriverLinkContext::~DriverLinkContext() = default;

}  // namespace cudacore::detail
