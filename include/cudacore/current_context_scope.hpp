/// @file
/// CurrentContextScope: makes a Context current on the calling thread for a scope, then puts back
/// whatever was current before (cuCtxPushCurrent / cuCtxPopCurrent), as DeviceScope does for a
/// device's primary context.
///
///     Context mine = Context::create(Device(0));
///     {
///         CurrentContextScope on(mine);
///         legacy_library_call();       // code that uses the current context works in `mine`
///     }                                // the previous context is current again
///
/// The scope holds the context (a created context is not destroyed while it is current). Scopes
/// nest; each must be destroyed on the thread that made it, innermost first (as a local variable
/// is). Construction throws InvalidArgumentError for a closed Context, DriverError when the push
/// fails; destruction never throws.
///
/// It is cudacore's push and pop: there is no bare push/pop pair (cuda-api-wrappers'
/// `context::current::push` / `pop`), because a bare push holds nothing (a created context could
/// be destroyed while on the stack) and a pop skipped by an exception leaves the stack deeper.
/// To push in one call and pop in another, keep a `std::optional<CurrentContextScope>` and
/// emplace / reset it (docs/loading-and-launching.md, "Contexts you create").
#pragma once

#include "cudacore/context.hpp"

namespace cudacore {

/// Makes a context current for a scope and restores the previous context after it.
class CurrentContextScope {
public:
    /// Holds `context` and pushes it current (cuCtxPushCurrent).
    explicit CurrentContextScope(const Context& context);
    ~CurrentContextScope();
    CurrentContextScope(const CurrentContextScope&) = delete;
    CurrentContextScope& operator=(const CurrentContextScope&) = delete;

    /// The context made current.
    const Context& context() const noexcept { return context_; }

private:
    Context context_;
};

}  // namespace cudacore
