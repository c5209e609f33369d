/// @file
/// CUDA profiler control: record only the part that matters. Every call throws
/// InvalidArgumentError (closed Context), DriverError, NoDriverError; keeps nothing; any thread.
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

/// Starts the profiling tool's collection for `context`.
void start(const Context& context);
/// Starts collection for `device`'s primary context.
void start(const Device& device);
/// Starts collection for the current context, or device 0's primary context.
void start();

/// Stops the profiling tool's collection for `context`.
void stop(const Context& context);
/// Stops collection for `device`'s primary context.
void stop(const Device& device);
/// Stops collection for the current context, or device 0's primary context.
void stop();

/// Collection for one scope and context, which it holds; the first scope to end stops it.
class Scope {
public:
    /// Starts collection for `context`.
    explicit Scope(const Context& context);
    /// Starts collection for `device`'s primary context.
    explicit Scope(const Device& device);
    /// Starts collection for the current context, or device 0's primary context.
    Scope();
    /// Stops collection, ignoring errors (call stop() first to see them).
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

    /// Stops collection now (once; the destructor then does nothing).
    void stop();
    /// The context whose collection the scope controls.
    const Context& context() const noexcept { return context_; }

private:
    Context context_;
    bool running_ = true;
};

}  // namespace cudacore::profiler

/// Pastes two tokens (not for direct use).
#define CUDACORE_PROFILER_CONCAT_(a, b) a##b
/// The scope variable's name on line `line` (not for direct use).
#define CUDACORE_PROFILER_NAME_(line) CUDACORE_PROFILER_CONCAT_(cudacore_profile_scope_, line)
/// Records the rest of the enclosing block (a profiler::Scope on the current context).
#define CUDACORE_PROFILE_THIS_SCOPE() \
    const ::cudacore::profiler::Scope CUDACORE_PROFILER_NAME_(__LINE__) {}
