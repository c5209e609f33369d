// The context the driver's linker (cuLink*) runs in. It needs a current context: the current
// device's primary context, made current while this object lives (the caller's is current again
// after), and held through held() for as long as a link state made in it lives. Defined above the
// runtime (src/crossings/driver_link_context.cpp), which knows the current device.
#pragma once

#include <memory>

namespace cudacore::detail {

class DriverLinkContext {
public:
    // Throws what Device::current().context() throws.
    DriverLinkContext();
    ~DriverLinkContext();
    DriverLinkContext(const DriverLinkContext&) = delete;
    DriverLinkContext& operator=(const DriverLinkContext&) = delete;

    // The context's box, type-erased: while a copy lives the primary context stays retained.
    const std::shared_ptr<const void>& held() const noexcept { return context_; }

private:
    struct Scope;
    std::shared_ptr<const void> context_;
    std::unique_ptr<Scope> scope_;  // declared last: the caller's context comes back first
};

}  // namespace cudacore::detail
