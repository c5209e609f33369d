/// @file
/// A context's limits (cuCtxGetLimit / cuCtxSetLimit) and its stream priority range, for any
/// context. Each call makes the context current for itself. The driver rounds some values: read a
/// limit back. The heap size cannot change after a kernel using malloc ran (DriverError). Any
/// thread; a limit is the context's.
///
///     Context primary = Device(0).context();
///     set_limit(primary, ContextLimit::printf_fifo_size, 4 << 20);
///     std::size_t heap = limit(primary, ContextLimit::malloc_heap_size);
///     StreamPriorityRange range = stream_priority_range(primary);  // e.g. -5 .. 0
///     set_limit(Device(1), ContextLimit::stack_size, 4096);         // device 1's primary context
#pragma once

#include "cudacore/context.hpp"
#include "cudacore/device.hpp"

#include <cstddef>
#include <string>

namespace cudacore {

/// A limit of a context: the CU_LIMIT_* values that can be read and set.
enum class ContextLimit {
    stack_size,                           ///< CU_LIMIT_STACK_SIZE: bytes of stack per GPU thread
    printf_fifo_size,                     ///< CU_LIMIT_PRINTF_FIFO_SIZE: bytes of the device printf FIFO
    malloc_heap_size,                     ///< CU_LIMIT_MALLOC_HEAP_SIZE: bytes of the device malloc heap
    /// CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH: nesting depth of device-side syncs; sm_89 and older only
    /// (the driver refuses it on sm_90 and newer: CUDA_ERROR_UNSUPPORTED_LIMIT).
    device_runtime_sync_depth,
    device_runtime_pending_launch_count,  ///< CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT: pending device launches
    max_l2_fetch_granularity,             ///< CU_LIMIT_MAX_L2_FETCH_GRANULARITY: bytes, 0 to 128 (a hint)
    persisting_l2_cache_size,             ///< CU_LIMIT_PERSISTING_L2_CACHE_SIZE: bytes of L2 set aside for persisting lines
};

/// "stack_size", "printf_fifo_size", ...; "ContextLimit(N)" for a value outside the enumeration.
/// Never throws beyond std::bad_alloc.
std::string to_string(ContextLimit limit);

/// The driver's CUlimit for `limit`. Throws InvalidArgumentError for a value outside the
/// enumeration, naming `call`. Pure: no driver, thread-safe.
CUlimit driver_limit(ContextLimit limit, const char* call = "driver_limit");

/// The current value of `which` in `context` (cuCtxGetLimit). Throws InvalidArgumentError for a
/// closed or empty Context or a value outside the enumeration (before the driver), DriverError
/// naming cuCtxGetLimit, the limit and the context when the driver refuses. Keeps nothing alive.
std::size_t limit(const Context& context, ContextLimit which);

/// Sets `which` in `context` to `value` (cuCtxSetLimit). Throws InvalidArgumentError for a
/// closed Context or a bad value (checked first), DriverError naming the limit, value and context
/// when the driver refuses. Keeps nothing alive.
void set_limit(const Context& context, ContextLimit which, std::size_t value);

/// The stream priorities a context offers: lower numbers are higher priorities, so `greatest` is
/// the smallest number (e.g. -5) and `least` the largest (0, the default priority).
struct StreamPriorityRange {
    int greatest = 0;  ///< the highest priority (numerically smallest)
    int least = 0;     ///< the lowest priority (numerically largest; the default)
    /// Whether `priority` is one the context offers (greatest <= priority <= least).
    bool contains(int priority) const noexcept { return priority >= greatest && priority <= least; }
    /// Equal when both ends are.
    bool operator==(const StreamPriorityRange&) const = default;
};

/// The stream priorities of `context` (cuCtxGetStreamPriorityRange). A stream asked with a
/// priority outside it is refused (Context::create_stream, Device::create_stream), with this
/// range in the message. InvalidArgumentError for a closed or empty Context, DriverError when the
/// driver refuses. Keeps nothing alive; thread-safe.
StreamPriorityRange stream_priority_range(const Context& context);

/// The value of `which` in `device`'s primary context (limit(device.context(), which)), as
/// cache_preference(device) reads the primary context's preference. Throws as limit(context,
/// which) does; a value outside the enumeration is refused before the context is retained.
/// Retains the primary context (as Device::context() does); thread-safe.
std::size_t limit(const Device& device, ContextLimit which);
/// Sets `which` in `device`'s primary context to `value` (set_limit(device.context(), which,
/// value)): every thread and every library that uses the primary context (the CUDA runtime
/// included) sees it. Throws as set_limit(context, which, value) does; the checks made before the
/// driver run before the context is retained. Retains the primary context; thread-safe.
void set_limit(const Device& device, ContextLimit which, std::size_t value);
/// The stream priorities of `device`'s primary context (stream_priority_range(device.context())),
/// which Device::create_stream checks a priority against. Throws as stream_priority_range(context)
/// does. Retains the primary context; thread-safe.
StreamPriorityRange stream_priority_range(const Device& device);

}  // namespace cudacore
