/// @file
/// A device's primary context.
///
/// Ownership: copies share one retained primary context. Once cudacore has retained a device's
/// primary context it keeps it retained until the process exits, as the CUDA runtime does (the
/// driver releases it at exit; docs/design/release-after-exit.md says why). Only a context
/// someone reset (cuDevicePrimaryCtxReset) is released, once the last object that holds it is
/// destroyed; the next use retains the new one. Release errors (the driver shutting down, the
/// device reset by someone else) are ignored: destruction never throws or prints.
#pragma once

#include <cuda.h>

#include <memory>

namespace cudacore {

// Declared only (src/ defines them): the private members' types and the friend reaching them.
namespace detail {
struct ContextBox;
struct BoxAccess;
}

class Device;

/// A CUDA context (a device's primary context, a green context, or one wrapped); copies share it.
class Context {
public:
    /// Wraps a context the caller has (cuCtxCreate, cuCtxGetCurrent, another library's). A
    /// device's primary context is retained like Device::context() (so it stays alive while the
    /// Context lives); any other context is never destroyed or released: the caller keeps it
    /// alive while the Context, and streams or events made through it, are used. Throws
    /// InvalidArgumentError for a null handle, DriverError for an invalid one.
    static Context from_handle(CUcontext context);

    /// The driver's context (null for a moved-from Context); valid while this Context lives.
    CUcontext handle() const noexcept;
    /// The device the context belongs to.
    Device device() const;
    /// Makes this context current on the calling thread.
    void set_current() const;

    /// The same object (identity.hpp says how each type compares).
    bool operator==(const Context& other) const noexcept { return handle() == other.handle(); }

private:
    friend struct detail::BoxAccess;
    explicit Context(std::shared_ptr<detail::ContextBox> box) noexcept : box_(std::move(box)) {}
    std::shared_ptr<detail::ContextBox> box_;
};

}  // namespace cudacore
