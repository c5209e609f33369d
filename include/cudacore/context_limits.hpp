/// @file
/// A context's limits (cuCtxGetLimit / cuCtxSetLimit) and its stream priority range. Each call
/// makes the context current for itself and keeps nothing alive; thread-safe. The driver rounds
/// some values (read a limit back). Calls throw InvalidArgumentError for a closed or empty Context
/// or a value outside the enumeration, before the driver; DriverError naming the call, the limit
/// and the context when the driver refuses (e.g. the heap size after a kernel using malloc ran).
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
    /// CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH: nesting depth of device-side syncs (sm_89 and older).
    device_runtime_sync_depth,
    device_runtime_pending_launch_count,  ///< CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT: pending device launches
    max_l2_fetch_granularity,             ///< CU_LIMIT_MAX_L2_FETCH_GRANULARITY: bytes, 0 to 128 (a hint)
    persisting_l2_cache_size,             ///< CU_LIMIT_PERSISTING_L2_CACHE_SIZE: bytes of L2 set aside for persisting lines
};

/// "stack_size", "printf_fifo_size", ...; "ContextLimit(N)" for other values.
std::string to_string(ContextLimit limit);

/// The driver's CUlimit for `limit`; InvalidArgumentError naming `call` for other values.
CUlimit driver_limit(ContextLimit limit, const char* call = "driver_limit");

/// The current value of `which` in `context`.
std::size_t limit(const Context& context, ContextLimit which);

/// Sets `which` in `context` to `value`.
void set_limit(const Context& context, ContextLimit which, std::size_t value);

/// The stream priorities a context offers: lower numbers are higher priorities.
struct StreamPriorityRange {
    int greatest = 0;  ///< the highest priority (numerically smallest)
    int least = 0;     ///< the lowest priority (numerically largest; the default)
    /// Whether `priority` is one the context offers (greatest <= priority <= least).
    bool contains(int priority) const noexcept { return priority >= greatest && priority <= least; }
    bool operator==(const StreamPriorityRange&) const = default;  ///< equal when both ends are
};

/// The stream priorities of `context`; a stream asked outside them is refused.
StreamPriorityRange stream_priority_range(const Context& context);

/// limit() of `device`'s primary context, which it retains.
std::size_t limit(const Device& device, ContextLimit which);
/// set_limit() of `device`'s primary context, which it retains: every user of that context (the
/// CUDA runtime included) sees it.
void set_limit(const Device& device, ContextLimit which, std::size_t value);
/// stream_priority_range() of `device`'s primary context, which it retains.
StreamPriorityRange stream_priority_range(const Device& device);

}  // namespace cudacore
