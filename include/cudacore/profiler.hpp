/// @file
/// CUDA profiler control (cuProfilerStart / cuProfilerStop): record only the part that matters
/// (`nsys profile --capture-range=cudaProfilerApi`, `ncu --profile-from-start off`). Each call
/// makes its context current for the driver call only; without one, the current context or
/// device 0's primary. Without a tool nothing happens. Errors: InvalidArgumentError for a closed
/// Context; DriverError naming the call and context; NoDriverError. Any thread.
///
///     warm_up();                                  // not recorded
///     {
///         profiler::Scope recorded;               // cuProfilerStart in the current context
///         launch(stream, config, kernel, data);   // recorded
///         stream.sync();
///     }                                           // cuProfilerStop
#pragma once

#include "cudacore/context.hpp"
#include "cudacore/device.hpp"

namespace cudacore::profiler {

/// Starts the profiling tool's collection for `context` (cuProfilerStart with `context` current
/// for the call). Keeps nothing alive. Throws as the file comment says.
void start(const Context& context);
/// Starts collection for `device`'s primary context (retained, as Device::context() does).
void start(const Device& device);
/// Starts collection for the calling thread's current context, or device 0's primary context
/// when none is current.
void start();

/// Stops the profiling tool's collection for `context` (cuProfilerStop with `context` current for
/// the call). Keeps nothing alive. Throws as the file comment says.
void stop(const Context& context);
/// Stops collection for `device`'s primary context.
void stop(const Device& device);
/// Stops collection for the calling thread's current context, or device 0's primary context when
/// none is current.
void stop();

/// Collection for one scope: starts it on construction and stops it on destruction, for one
/// context (CUDACORE_PROFILE_THIS_SCOPE() names one for the rest of a block). Holds its context,
/// so a created context is not destroyed while the scope lasts. Scopes do not count: the first
/// one to end stops collection for the context. Neither copied nor moved.
class Scope {
public:
    /// Starts collection for `context` (start(context)); throws as start does.
    explicit Scope(const Context& context);
    /// Starts collection for `device`'s primary context.
    explicit Scope(const Device& device);
    /// Starts collection for the calling thread's current context, or device 0's primary context
    /// when none is current.
    Scope();
    /// Stops collection for the context (stop(context)); an error (the context reset meanwhile,
    /// the driver shutting down) is ignored: call stop() first to see it. Never throws.
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

    /// Stops collection now (once; the destructor then does nothing). Throws as profiler::stop
    /// does.
    void stop();
    /// The context whose collection the scope controls.
    const Context& context() const noexcept { return context_; }

private:
    Context context_;
    bool running_ = true;
};

}  // namespace cudacore::profiler

/// Pastes two tokens (CUDACORE_PROFILE_THIS_SCOPE's variable name; not for direct use).
#define CUDACORE_PROFILER_CONCAT_(a, b) a##b
/// The scope variable's name on line `line` (CUDACORE_PROFILE_THIS_SCOPE; not for direct use).
#define CUDACORE_PROFILER_NAME_(line) CUDACORE_PROFILER_CONCAT_(cudacore_profile_scope_, line)
/// Records the rest of the enclosing block with the profiler (a profiler::Scope on the calling
/// thread's current context, or device 0's primary context), as cuda-api-wrappers'
/// `profile_this_scope()` does.
#define CUDACORE_PROFILE_THIS_SCOPE() \
    const ::cudacore::profiler::Scope CUDACORE_PROFILER_NAME_(__LINE__) {}
