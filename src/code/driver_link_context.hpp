// The context the driver's linker (cuLink*) runs in. It needs a current context: the current
// device's primary context, made current while this object lives (the caller's is current again
// after), and held through held() for as long as a link state made in it lives.
//
// Only the runtime knows the current device's primary context (its registry keeps each retained
// until exit and forgets it after a reset; a copy here would retain it a second time or make and
// destroy it on every link), so the runtime installs the hook that enters it
// (runtime/driver_link_context.cpp), as the loader installs the errors layer's status lookup
// (errors/driver_status_lookup.hpp).
#pragma once

#include <memory>

namespace cudacore::detail {

// What the hook gives: the context's box, type-erased (the primary context stays retained while
// a copy lives), and the scope that keeps it current (the caller's context comes back when the
// scope is destroyed). Throws what Device::current().context() throws.
struct EnteredLinkContext {
    std::shared_ptr<const void> context;
    std::shared_ptr<void> scope;
};
using DriverLinkContextHook = EnteredLinkContext (*)();

// Sets the hook (release); later DriverLinkContexts use it. Set once, by the runtime.
void set_driver_link_context_hook(DriverLinkContextHook hook) noexcept;

class DriverLinkContext {
public:
    // Throws what the hook throws, or Error when no runtime installed one.
    DriverLinkContext();
    ~DriverLinkContext();
    DriverLinkContext(const DriverLinkContext&) = delete;
    DriverLinkContext& operator=(const DriverLinkContext&) = delete;

    // The context's box, type-erased: while a copy lives the primary context stays retained.
    const std::shared_ptr<const void>& held() const noexcept { return context_; }

private:
    std::shared_ptr<const void> context_;
    std::shared_ptr<void> scope_;  // declared last: the caller's context comes back first
};

}  // namespace cudacore::detail
