// CUDA profiler control (profiler.hpp): cuProfilerStart / cuProfilerStop with the context made
// current for the call.
#include "cudacore/profiler.hpp"

#include "cudacore/errors.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"

#include <optional>
#include <string>
#include <utility>

namespace cudacore::profiler {

namespace {

using Entry = CUresult(CUDAAPI*)();

// Calls `slot` of the driver's table (cuProfilerStart or cuProfilerStop) with `context` current.
void call_in(const Context& context, Entry detail::DriverApi::*slot, const char* driver_call,
             const char* call) {
    const detail::ContextBox& box = *detail::open_box_of(context, call);
    const detail::DriverApi& api = detail::driver();
    const Entry entry = api.*slot;
    if (!entry)
        throw DriverError(CUDA_ERROR_NOT_SUPPORTED, driver_call,
                          detail::describe_context(box) + ": not supported by this driver (" +
                              api.path + " has no " + driver_call + ")");
    detail::ContextScope scope(box);
    detail::check(entry(), driver_call, [&] { return detail::describe_context(box); });
}

// The calling thread's current context, or device 0's primary context when none is current.
Context current_or_first() {
    if (std::optional<Context> current = Context::current_if_any()) return std::move(*current);
    return Device(0).context();
}

}  // namespace

void start(const Context& context) {
    call_in(context, &detail::DriverApi::cuProfilerStart, "cuProfilerStart", "profiler::start");
}
void start(const Device& device) { start(device.context()); }
void start() { start(current_or_first()); }

void stop(const Context& context) {
    call_in(context, &detail::DriverApi::cuProfilerStop, "cuProfilerStop", "profiler::stop");
}
void stop(const Device& device) { stop(device.context()); }
void stop() { stop(current_or_first()); }

Scope::Scope(const Context& context) : context_(context) { start(context_); }
Scope::Scope(const Device& device) : Scope(device.context()) {}
Scope::Scope() : Scope(current_or_first()) {}

Scope::~Scope() {
    if (!running_) return;
    try {
        profiler::stop(context_);
    } catch (...) {  // never throws: a reset context or a driver shutting down leaves nothing to stop
    }
}

void Scope::stop() {
    if (!running_) return;
    running_ = false;
    profiler::stop(context_);
}

}  // namespace cudacore::profiler
