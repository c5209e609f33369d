// A context's limits (cuCtxGetLimit / cuCtxSetLimit) and stream priority range.
#include "cudacore/context_limits.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"

#include <array>

namespace cudacore {

namespace {

struct LimitEntry {
    ContextLimit limit;
    CUlimit driver;
    const char* name;
};
constexpr std::array<LimitEntry, 7> kLimits{{
    {ContextLimit::stack_size, CU_LIMIT_STACK_SIZE, "stack_size"},
    {ContextLimit::printf_fifo_size, CU_LIMIT_PRINTF_FIFO_SIZE, "printf_fifo_size"},
    {ContextLimit::malloc_heap_size, CU_LIMIT_MALLOC_HEAP_SIZE, "malloc_heap_size"},
    {ContextLimit::device_runtime_sync_depth, CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH,
     "device_runtime_sync_depth"},
    {ContextLimit::device_runtime_pending_launch_count, CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT,
     "device_runtime_pending_launch_count"},
    {ContextLimit::max_l2_fetch_granularity, CU_LIMIT_MAX_L2_FETCH_GRANULARITY,
     "max_l2_fetch_granularity"},
    {ContextLimit::persisting_l2_cache_size, CU_LIMIT_PERSISTING_L2_CACHE_SIZE,
     "persisting_l2_cache_size"},
}};

const LimitEntry* find_limit(ContextLimit limit) noexcept {
    for (const LimitEntry& entry : kLimits)
        if (entry.limit == limit) return &entry;
    return nullptr;
}

// The largest max_l2_fetch_granularity the driver documents (bytes).
constexpr std::size_t kMaxL2FetchGranularity = 128;

}  // namespace

std::string to_string(ContextLimit limit) {
    if (const LimitEntry* entry = find_limit(limit)) return entry->name;
    return "ContextLimit(" + std::to_string(static_cast<int>(limit)) + ")";
}

CUlimit driver_limit(ContextLimit limit, const char* call) {
    if (const LimitEntry* entry = find_limit(limit)) return entry->driver;
    throw InvalidArgumentError(std::string(call) + ": ContextLimit " +
                               std::to_string(static_cast<int>(limit)) +
                               " is not a limit (stack_size .. persisting_l2_cache_size)");
}

std::size_t limit(const Context& context, ContextLimit which) {
    const auto& box = detail::open_box_of(context, "limit");
    const CUlimit driver = driver_limit(which, "limit");
    detail::ContextScope scope(*box);
    std::size_t value = 0;
    detail::check(detail::driver().cuCtxGetLimit(&value, driver), "cuCtxGetLimit",
                  [&] { return to_string(which) + " of " + detail::describe_context(*box); });
    return value;
}

namespace {

// The driver's limit for `which`, refusing what the driver would refuse without saying why.
CUlimit checked_limit(ContextLimit which, std::size_t value) {
    const CUlimit driver = driver_limit(which, "set_limit");
    if (which == ContextLimit::max_l2_fetch_granularity && value > kMaxL2FetchGranularity)
        throw InvalidArgumentError("set_limit: max_l2_fetch_granularity " + std::to_string(value) +
                                   " is more than " + std::to_string(kMaxL2FetchGranularity) +
                                   " bytes (the driver takes 0 to 128)");
    return driver;
}

}  // namespace

void set_limit(const Context& context, ContextLimit which, std::size_t value) {
    const auto& box = detail::open_box_of(context, "set_limit");
    const CUlimit driver = checked_limit(which, value);
    detail::ContextScope scope(*box);
    detail::check(detail::driver().cuCtxSetLimit(driver, value), "cuCtxSetLimit", [&] {
        return to_string(which) + " = " + std::to_string(value) + " in " +
               detail::describe_context(*box);
    });
}

StreamPriorityRange stream_priority_range(const Context& context) {
    const auto& box = detail::open_box_of(context, "stream_priority_range");
    detail::ContextScope scope(*box);
    StreamPriorityRange range;
    detail::check(detail::driver().cuCtxGetStreamPriorityRange(&range.least, &range.greatest),
                  "cuCtxGetStreamPriorityRange", [&] { return detail::describe_context(*box); });
    return range;
}

std::size_t limit(const Device& device, ContextLimit which) {
    driver_limit(which, "limit");  // refused before the primary context is retained
    return limit(device.context(), which);
}

void set_limit(const Device& device, ContextLimit which, std::size_t value) {
    checked_limit(which, value);  // refused before the primary context is retained
    set_limit(device.context(), which, value);
}

StreamPriorityRange stream_priority_range(const Device& device) {
    return stream_priority_range(device.context());
}

}  // namespace cudacore
