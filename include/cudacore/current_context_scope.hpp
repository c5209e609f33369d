/// @file
/// CurrentContextScope: makes a Context current on the calling thread for a scope (push), then
/// restores the previous one (pop), holding the context meanwhile. There is no bare push or pop.
///
///     Context mine = Context::create(Device(0));
///     {
///         CurrentContextScope on(mine);
///         legacy_library_call();       // code that uses the current context works in `mine`
///     }                                // the previous context is current again
#pragma once

#include "cudacore/context.hpp"

namespace cudacore {

/// Makes a context current for a scope. Scopes nest, each destroyed on its thread, innermost first.
class CurrentContextScope {
public:
    /// Holds `context` and pushes it current. InvalidArgumentError when closed, DriverError.
    explicit CurrentContextScope(const Context& context);
    ~CurrentContextScope();
    CurrentContextScope(const CurrentContextScope&) = delete;
    CurrentContextScope& operator=(const CurrentContextScope&) = delete;

    const Context& context() const noexcept { return context_; }  ///< the context made current

private:
    Context context_;
};

}  // namespace cudacore
