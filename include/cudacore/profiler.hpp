/// @file
/// CUDA profiler control: starts and stops the collection of the profiling tool the process runs
/// under (cuProfilerStart / cuProfilerStop), so that only the part of a program that matters is
/// recorded. Nsight Systems records only between them with `nsys profile
/// --capture-range=cudaProfilerApi`, Nsight Compute with `ncu --profile-from-start off`;
/// cuda-api-wrappers calls the same pair `cuda::profiling::start()` / `stop()` and its scope
/// `profile_this_scope()`.
///
///     warm_up();                                  // not recorded
///     {
///         profiler::Scope recorded;               // cuProfilerStart in the current context
///         launch(stream, config, kernel, data);   // recorded
///         stream.sync();
///     }                                           // cuProfilerStop
///
/// The driver starts and stops collection for a context, the one current on the calling thread:
/// each call here takes a Context (or a Device, its primary context) and makes it current for the
/// driver call only (push, then pop), so the calling thread's current context is unchanged. The
/// calls without one use the calling thread's current context, or device 0's primary context when
/// none is current (as cudaProfilerStart does). Without a profiling tool the driver does nothing
/// and answers success; starting twice, or stopping what was not started, does nothing either.
///
/// Errors: InvalidArgumentError naming the call for a closed or empty Context; DriverError naming
/// cuProfilerStart or cuProfilerStop and the context when the driver refuses, or, with
/// CUDA_ERROR_NOT_SUPPORTED, when the driver's table lacks the entry point; NoDriverError without
/// a driver. Thread safety: the calls may be made from any thread; collection is the context's
/// (the profiling tool's), not the thread's.
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
