// A context's settings on a real GPU: limits and cache preference set and read back on the
// primary and on a created context (each its own), a kernel preference set, the stream priority
// range and its refusal message, the primary context's state and flags, the current context
// asked without throwing, is_primary for each kind of context, a device found by its PCI bus id,
// and the driver's free and total memory.
#include "kernel_sources.hpp"
#include "test_support.hpp"

#include "cudacore/cache_preference.hpp"
#include "cudacore/context.hpp"
#include "cudacore/context_limits.hpp"
#include "cudacore/current_context_scope.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/kernel.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/primary_context.hpp"
#include "cudacore/program.hpp"
#include "cudacore/stream.hpp"
#include "loader/driver_api.hpp"

#include <optional>
#include <string>
#include <thread>

namespace {

using namespace cudacore;

constexpr std::size_t MiB = std::size_t{1} << 20;

TEST(ContextSettingsGpu, LimitsSetAndReadBackOnPrimaryAndCreatedContexts) {
    CUDACORE_REQUIRE_GPU();
    const Device device(0);
    const Context primary = device.context();
    const Context mine = Context::create(device);
    for (const Context* context : {&primary, &mine}) {
        SCOPED_TRACE(context->is_primary() ? "primary" : "created");
        set_limit(*context, ContextLimit::printf_fifo_size, 3 * MiB);
        EXPECT_EQ(limit(*context, ContextLimit::printf_fifo_size), 3 * MiB);
        set_limit(*context, ContextLimit::malloc_heap_size, 16 * MiB);
        EXPECT_EQ(limit(*context, ContextLimit::malloc_heap_size), 16 * MiB);
        set_limit(*context, ContextLimit::stack_size, 4096);
        EXPECT_GE(limit(*context, ContextLimit::stack_size), 4096u);  // rounded up at most
        set_limit(*context, ContextLimit::device_runtime_pending_launch_count, 4096);
        EXPECT_EQ(limit(*context, ContextLimit::device_runtime_pending_launch_count), 4096u);
        if (device.compute_capability().major < 9) {  // sm_90 and newer: unsupported (below)
            set_limit(*context, ContextLimit::device_runtime_sync_depth, 3);
            EXPECT_EQ(limit(*context, ContextLimit::device_runtime_sync_depth), 3u);
        }
        set_limit(*context, ContextLimit::max_l2_fetch_granularity, 64);
        EXPECT_EQ(limit(*context, ContextLimit::max_l2_fetch_granularity), 64u);
        const int max_persisting = device.attribute(CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE);
        if (max_persisting > 0) {
            set_limit(*context, ContextLimit::persisting_l2_cache_size, MiB);
            const std::size_t persisting = limit(*context, ContextLimit::persisting_l2_cache_size);
            EXPECT_GT(persisting, 0u);
            EXPECT_LE(persisting, static_cast<std::size_t>(max_persisting));
        }
    }
    // Each context has its own: a change to one leaves the other as it was.
    set_limit(mine, ContextLimit::printf_fifo_size, 5 * MiB);
    EXPECT_EQ(limit(primary, ContextLimit::printf_fifo_size), 3 * MiB);
    EXPECT_EQ(limit(mine, ContextLimit::printf_fifo_size), 5 * MiB);
    // Refused before the driver, with the context's current state unchanged.
    test::expect_invalid([&] { set_limit(mine, ContextLimit::max_l2_fetch_granularity, 129); },
                         {"set_limit", "max_l2_fetch_granularity", "129", "128"});
    test::expect_invalid([&] { (void)limit(mine, static_cast<ContextLimit>(42)); },
                         {"limit", "ContextLimit 42"});
    // The calling thread's current context is left as it was.
    EXPECT_FALSE(Context::current_if_any().has_value() &&
                 Context::current_if_any()->handle() == mine.handle());
}

// A Device means its primary context: limit, set_limit and stream_priority_range on a Device read
// and write what the same calls on Device::context() do, each device its own (on every device
// there is, two on a two-GPU host), and a value the driver would refuse is refused first.
TEST(ContextSettingsGpu, LimitsAndPriorityRangeOfADeviceAreItsPrimaryContexts) {
    CUDACORE_REQUIRE_GPU();
    const int count = Device::count();
    for (int ordinal = 0; ordinal < count; ++ordinal) {
        SCOPED_TRACE("device " + std::to_string(ordinal));
        const Device device(ordinal);
        set_limit(device, ContextLimit::printf_fifo_size, (2 + ordinal) * MiB);
        EXPECT_EQ(limit(device, ContextLimit::printf_fifo_size), (2 + ordinal) * MiB);
        EXPECT_EQ(limit(device.context(), ContextLimit::printf_fifo_size), (2 + ordinal) * MiB);
        set_limit(device.context(), ContextLimit::malloc_heap_size, (8 + ordinal) * MiB);
        EXPECT_EQ(limit(device, ContextLimit::malloc_heap_size), (8 + ordinal) * MiB);
        EXPECT_EQ(stream_priority_range(device), stream_priority_range(device.context()));
        const Stream high = device.create_stream({.priority = stream_priority_range(device).greatest});
        EXPECT_EQ(high.priority(), stream_priority_range(device).greatest);
        test::expect_invalid([&] { set_limit(device, ContextLimit::max_l2_fetch_granularity, 129); },
                             {"set_limit", "max_l2_fetch_granularity", "129"});
        test::expect_invalid([&] { (void)limit(device, static_cast<ContextLimit>(42)); },
                             {"limit", "ContextLimit 42"});
    }
    // Each device's primary context keeps its own value.
    for (int ordinal = 0; ordinal < count; ++ordinal)
        EXPECT_EQ(limit(Device(ordinal), ContextLimit::printf_fifo_size), (2 + ordinal) * MiB);
    for (int ordinal = 0; ordinal < count; ++ordinal)
        set_limit(Device(ordinal), ContextLimit::printf_fifo_size, MiB);
}

// The driver's refusal of a limit is a DriverError naming the limit, the value and the context:
// device-side synchronisation depth, which sm_90 and newer do not have (CDP2).
TEST(ContextSettingsGpu, AnUnsupportedLimitIsTheDriversErrorNamingTheLimit) {
    CUDACORE_REQUIRE_GPU();
    const Device device(0);
    if (device.compute_capability().major < 9) GTEST_SKIP() << "the limit is supported before sm_90";
    const Context mine = Context::create(device);
    try {
        set_limit(mine, ContextLimit::device_runtime_sync_depth, 3);
        ADD_FAILURE() << "device_runtime_sync_depth was accepted on " << device.arch();
    } catch (const DriverError& e) {
        EXPECT_EQ(e.call(), "cuCtxSetLimit");
        EXPECT_EQ(e.status(), CUDA_ERROR_UNSUPPORTED_LIMIT);
        EXPECT_NE(std::string(e.what()).find("device_runtime_sync_depth = 3"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("created context"), std::string::npos) << e.what();
    }
}

TEST(ContextSettingsGpu, CachePreferenceOfContextsDevicesAndKernels) {
    CUDACORE_REQUIRE_GPU();
    const Device device(0);
    const Context mine = Context::create(device);
    for (CachePreference preference : {CachePreference::prefer_shared, CachePreference::prefer_l1,
                                       CachePreference::equal, CachePreference::none}) {
        SCOPED_TRACE(to_string(preference));
        set_cache_preference(device, preference);
        EXPECT_EQ(cache_preference(device), preference);
        EXPECT_EQ(cache_preference(device.context()), preference);
        set_cache_preference(mine, preference);
        EXPECT_EQ(cache_preference(mine), preference);
    }
    set_cache_preference(mine, CachePreference::prefer_l1);
    set_cache_preference(device, CachePreference::prefer_shared);
    EXPECT_EQ(cache_preference(mine), CachePreference::prefer_l1);  // its own, not the primary's
    set_cache_preference(device, CachePreference::none);

    ProgramOptions options;
    options.name = "cache_preference_test";
    options.arch = device.arch();
    const ObjectCode code = Program(test::kSaxpySource, SourceType::cxx, options).compile(CodeType::cubin);
    const Kernel kernel = code.get_kernel("saxpy");
    for (CachePreference preference : {CachePreference::prefer_shared, CachePreference::prefer_l1,
                                       CachePreference::equal, CachePreference::none})
        EXPECT_NO_THROW(set_cache_preference(kernel, preference, device));
    test::expect_invalid([&] { set_cache_preference(kernel, static_cast<CachePreference>(9), device); },
                         {"set_cache_preference", "CachePreference 9"});
}

TEST(ContextSettingsGpu, StreamPriorityRangeAndItsRefusal) {
    CUDACORE_REQUIRE_GPU();
    const Device device(0);
    const Context mine = Context::create(device);
    const StreamPriorityRange range = stream_priority_range(device.context());
    EXPECT_LE(range.greatest, range.least);
    EXPECT_TRUE(range.contains(range.least));
    EXPECT_TRUE(range.contains(range.greatest));
    EXPECT_EQ(stream_priority_range(mine), range);
    int least = 0, greatest = 0;
    {
        const CurrentContextScope scope(device.context());
        ASSERT_EQ(detail::driver().cuCtxGetStreamPriorityRange(&least, &greatest), CUDA_SUCCESS);
    }
    EXPECT_EQ(range, (StreamPriorityRange{greatest, least}));
    const Stream high = mine.create_stream({.priority = range.greatest});
    EXPECT_EQ(high.priority(), range.greatest);
    const std::string expected = "range " + std::to_string(range.greatest) + " (highest) .. " +
                                 std::to_string(range.least) + " (lowest)";
    test::expect_invalid([&] { mine.create_stream({.priority = range.greatest - 1}); },
                         {"create_stream", "created context", expected.c_str(),
                          "stream_priority_range"});
    test::expect_invalid([&] { device.create_stream({.priority = range.least + 1}); },
                         {"create_stream", expected.c_str()});
}

TEST(ContextSettingsGpu, PrimaryContextStateAndFlags) {
    CUDACORE_REQUIRE_GPU();
    const Device device(0);
    const Context primary = device.context();  // retained: active from here on
    const PrimaryContextState before = primary_context_state(device);
    EXPECT_TRUE(before.active);
    EXPECT_EQ(before.flags & CU_CTX_SCHED_MASK, primary.flags() & CU_CTX_SCHED_MASK);
    set_primary_context_options(device, {.scheduling = ContextScheduling::blocking_sync,
                                         .lmem_resize_to_max = true});
    const PrimaryContextState after = primary_context_state(device);
    EXPECT_TRUE(after.active);
    EXPECT_EQ(after.options.scheduling, ContextScheduling::blocking_sync);
    EXPECT_TRUE(after.options.lmem_resize_to_max);
    EXPECT_EQ(primary.options().scheduling, ContextScheduling::blocking_sync);  // the active one
    set_primary_context_options(device, {.scheduling = ContextScheduling::spin});
    EXPECT_EQ(primary_context_state(device).options.scheduling, ContextScheduling::spin);
    set_primary_context_options(device, before.options);
    test::expect_invalid([&] { set_primary_context_options(device, {.sm_count = 8}); },
                         {"set_primary_context_options", "sm_count"});
}

TEST(ContextSettingsGpu, CurrentIfAnyAndIsPrimary) {
    CUDACORE_REQUIRE_GPU();
    const Device device(0);
    std::thread([&] {
        // A new thread has no current context.
        EXPECT_FALSE(Context::current_if_any().has_value());
        test::expect_invalid([] { Context::current(); }, {"Context::current", "current_if_any"});
        device.set_current();
        const std::optional<Context> current = Context::current_if_any();
        ASSERT_TRUE(current.has_value());
        EXPECT_TRUE(current->is_primary());
        EXPECT_EQ(current->handle(), device.context().handle());
    }).join();
    const Context mine = Context::create(device);
    EXPECT_FALSE(mine.is_primary());
    EXPECT_TRUE(mine.is_created());
    EXPECT_TRUE(device.context().is_primary());
    {
        CurrentContextScope on(mine);
        const std::optional<Context> current = Context::current_if_any();
        ASSERT_TRUE(current.has_value());
        EXPECT_EQ(*current, mine);
        EXPECT_FALSE(current->is_primary());
    }
    // A foreign context (made by the driver directly, wrapped without ownership).
    CUcontext raw = nullptr;
    ASSERT_EQ(detail::driver().cuCtxCreate(&raw, nullptr, 0, device.handle()), CUDA_SUCCESS);
    CUcontext popped = nullptr;
    detail::driver().cuCtxPopCurrent(&popped);
    {
        const Context foreign = Context::from_handle(raw);
        EXPECT_FALSE(foreign.is_primary());
        EXPECT_FALSE(foreign.is_created());
    }
    EXPECT_EQ(detail::driver().cuCtxDestroy(raw), CUDA_SUCCESS);
    Context closed = Context::create(device);
    closed.close();
    EXPECT_FALSE(closed.is_primary());
}

TEST(ContextSettingsGpu, DeviceByPciBusIdAndDriverMemoryInfo) {
    CUDACORE_REQUIRE_GPU();
    for (const Device& device : Device::all()) {
        const std::string id = device.pci_bus_id();
        EXPECT_EQ(Device::from_pci_bus_id(id), device) << id;
        const DeviceMemoryInfo info = device.memory_info();
        EXPECT_EQ(info.total_bytes, device.total_memory());
        EXPECT_GT(info.free_bytes, 0u);
        EXPECT_LE(info.free_bytes, info.total_bytes);
    }
    // A well-formed id no device has.
    test::expect_invalid([] { Device::from_pci_bus_id("ffff:ff:1f.7"); },
                         {"Device::from_pci_bus_id", "ffff:ff:1f.7", "devices present"});
    // Memory taken shows in the driver's free count.
    const Device device(0);
    const std::size_t before = device.memory_info().free_bytes;
    CUdeviceptr taken = 0;
    {
        CurrentContextScope on(device.context());
        ASSERT_EQ(detail::driver().cuMemAlloc(&taken, 512 * MiB), CUDA_SUCCESS);
    }
    EXPECT_LE(device.memory_info().free_bytes + 256 * MiB, before);
    CurrentContextScope on(device.context());
    EXPECT_EQ(detail::driver().cuMemFree(taken), CUDA_SUCCESS);
}

}  // namespace
