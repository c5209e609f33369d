// A context's settings without a GPU: limits, cache preferences and primary-context flags turn
// into the driver's values and back by name, values outside the enumerations and impossible
// values are refused before the driver is reached (a context that is not real shows it: any
// driver call on it would fail differently), closed contexts are refused by every new call, and a
// malformed PCI bus id is refused before the driver is loaded.
#include "test_support.hpp"

#include "cudacore/cache_preference.hpp"
#include "cudacore/context.hpp"
#include "cudacore/context_limits.hpp"
#include "cudacore/context_peer_access.hpp"
#include "cudacore/cuda_array.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/mipmapped_array.hpp"
#include "cudacore/primary_context.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"

#include <memory>
#include <string>

namespace {

using namespace cudacore;

// A context the caller owns (not retained, not created), or one that says it is primary: no
// driver is called for it unless a call gets that far.
Context fake_context(bool primary = false) {
    auto box = std::make_shared<detail::ContextBox>();
    box->handle = reinterpret_cast<CUcontext>(0x1234);
    box->retained = primary;
    return detail::BoxAccess::make<Context>(std::move(box));
}

TEST(ContextLimit, NamesAndDriverValues) {
    EXPECT_EQ(to_string(ContextLimit::stack_size), "stack_size");
    EXPECT_EQ(to_string(ContextLimit::printf_fifo_size), "printf_fifo_size");
    EXPECT_EQ(to_string(ContextLimit::malloc_heap_size), "malloc_heap_size");
    EXPECT_EQ(to_string(ContextLimit::device_runtime_sync_depth), "device_runtime_sync_depth");
    EXPECT_EQ(to_string(ContextLimit::device_runtime_pending_launch_count),
              "device_runtime_pending_launch_count");
    EXPECT_EQ(to_string(ContextLimit::max_l2_fetch_granularity), "max_l2_fetch_granularity");
    EXPECT_EQ(to_string(ContextLimit::persisting_l2_cache_size), "persisting_l2_cache_size");
    EXPECT_EQ(to_string(static_cast<ContextLimit>(17)), "ContextLimit(17)");
    EXPECT_EQ(driver_limit(ContextLimit::stack_size), CU_LIMIT_STACK_SIZE);
    EXPECT_EQ(driver_limit(ContextLimit::printf_fifo_size), CU_LIMIT_PRINTF_FIFO_SIZE);
    EXPECT_EQ(driver_limit(ContextLimit::malloc_heap_size), CU_LIMIT_MALLOC_HEAP_SIZE);
    EXPECT_EQ(driver_limit(ContextLimit::device_runtime_sync_depth), CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH);
    EXPECT_EQ(driver_limit(ContextLimit::device_runtime_pending_launch_count),
              CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT);
    EXPECT_EQ(driver_limit(ContextLimit::max_l2_fetch_granularity), CU_LIMIT_MAX_L2_FETCH_GRANULARITY);
    EXPECT_EQ(driver_limit(ContextLimit::persisting_l2_cache_size), CU_LIMIT_PERSISTING_L2_CACHE_SIZE);
    test::expect_invalid([] { driver_limit(static_cast<ContextLimit>(-1), "here"); },
                         {"here", "ContextLimit -1", "is not a limit"});
}

TEST(ContextLimit, RefusedBeforeTheDriver) {
    const Context context = fake_context();
    test::expect_invalid([&] { (void)limit(context, static_cast<ContextLimit>(7)); },
                         {"limit", "ContextLimit 7"});
    test::expect_invalid([&] { set_limit(context, static_cast<ContextLimit>(99), 1); },
                         {"set_limit", "ContextLimit 99"});
    test::expect_invalid([&] { set_limit(context, ContextLimit::max_l2_fetch_granularity, 256); },
                         {"set_limit", "max_l2_fetch_granularity 256", "0 to 128"});
}

TEST(StreamPriorityRange, ContainsItsEndsOnly) {
    const StreamPriorityRange range{.greatest = -5, .least = 0};
    EXPECT_TRUE(range.contains(-5));
    EXPECT_TRUE(range.contains(0));
    EXPECT_TRUE(range.contains(-2));
    EXPECT_FALSE(range.contains(-6));
    EXPECT_FALSE(range.contains(1));
    EXPECT_EQ(range, (StreamPriorityRange{-5, 0}));
}

TEST(CachePreference, NamesAndDriverValues) {
    EXPECT_EQ(to_string(CachePreference::none), "none");
    EXPECT_EQ(to_string(CachePreference::prefer_shared), "prefer_shared");
    EXPECT_EQ(to_string(CachePreference::prefer_l1), "prefer_l1");
    EXPECT_EQ(to_string(CachePreference::equal), "equal");
    EXPECT_EQ(to_string(static_cast<CachePreference>(8)), "CachePreference(8)");
    EXPECT_EQ(driver_cache_config(CachePreference::none), CU_FUNC_CACHE_PREFER_NONE);
    EXPECT_EQ(driver_cache_config(CachePreference::prefer_shared), CU_FUNC_CACHE_PREFER_SHARED);
    EXPECT_EQ(driver_cache_config(CachePreference::prefer_l1), CU_FUNC_CACHE_PREFER_L1);
    EXPECT_EQ(driver_cache_config(CachePreference::equal), CU_FUNC_CACHE_PREFER_EQUAL);
    test::expect_invalid([] { driver_cache_config(static_cast<CachePreference>(4), "there"); },
                         {"there", "CachePreference 4", "none, prefer_shared, prefer_l1, equal"});
    test::expect_invalid(
        [] { set_cache_preference(fake_context(), static_cast<CachePreference>(5)); },
        {"set_cache_preference", "CachePreference 5"});
}

TEST(PrimaryContextFlags, FromOptionsAndRefusals) {
    EXPECT_EQ(primary_context_flags({}), unsigned{CU_CTX_SCHED_AUTO});
    EXPECT_EQ(primary_context_flags({.scheduling = ContextScheduling::blocking_sync,
                                     .map_host = true,
                                     .lmem_resize_to_max = true}),
              unsigned{CU_CTX_SCHED_BLOCKING_SYNC | CU_CTX_MAP_HOST | CU_CTX_LMEM_RESIZE_TO_MAX});
    EXPECT_EQ(primary_context_flags({.scheduling = ContextScheduling::spin, .sync_memops = true}),
              unsigned{CU_CTX_SCHED_SPIN | CU_CTX_SYNC_MEMOPS});
    test::expect_invalid([] { primary_context_flags({.sm_count = 16}, "set_it"); },
                         {"set_it", "sm_count 16", "Context::create"});
    test::expect_invalid(
        [] { primary_context_flags({.scheduling = static_cast<ContextScheduling>(9)}); },
        {"primary_context_flags", "scheduling is 9"});
}

TEST(Context, IsPrimaryOnlyForAPrimaryContext) {
    EXPECT_FALSE(fake_context().is_primary());
    const Context primary = fake_context(true);
    EXPECT_TRUE(primary.is_primary());
    detail::box_of(primary)->retained = false;  // so that its box releases nothing
    Context closed = fake_context();
    closed.close();
    EXPECT_FALSE(closed.is_primary());
}

TEST(Context, TheNewCallsRefuseAClosedContext) {
    Context closed = fake_context();
    const Context open = fake_context();
    closed.close();
    test::expect_invalid([&] { (void)limit(closed, ContextLimit::stack_size); }, {"limit", "closed"});
    test::expect_invalid([&] { set_limit(closed, ContextLimit::stack_size, 1024); },
                         {"set_limit", "closed"});
    test::expect_invalid([&] { (void)stream_priority_range(closed); },
                         {"stream_priority_range", "closed"});
    test::expect_invalid([&] { (void)cache_preference(closed); }, {"cache_preference", "closed"});
    test::expect_invalid([&] { set_cache_preference(closed, CachePreference::prefer_l1); },
                         {"set_cache_preference", "closed"});
    test::expect_invalid([&] { closed.default_stream(); }, {"Context::default_stream", "closed"});
    test::expect_invalid([&] { closed.per_thread_stream(); }, {"Context::per_thread_stream", "closed"});
    test::expect_invalid([&] { CudaArray::create(closed, {.width = 16}); },
                         {"CudaArray::create", "closed"});
    test::expect_invalid([&] { MipmappedArray::create(closed, {.width = 16, .height = 16}, 2); },
                         {"MipmappedArray::create", "closed"});
    test::expect_invalid([&] { enable_peer_access(closed, open); }, {"enable_peer_access", "closed"});
    test::expect_invalid([&] { disable_peer_access(open, closed); }, {"disable_peer_access", "closed"});
    EXPECT_FALSE(is_peer_access_enabled(open, closed));
    EXPECT_TRUE(is_peer_access_enabled(open, open));
    // Two contexts of one device (both ordinal 0): refused before the driver.
    const Context other = fake_context();
    test::expect_invalid([&] { enable_peer_access(open, other); },
                         {"enable_peer_access", "same device"});
}

TEST(Device, AMalformedPciBusIdIsRefusedBeforeTheDriver) {
    test::expect_invalid([] { Device::from_pci_bus_id(""); }, {"Device::from_pci_bus_id", "empty"});
    test::expect_invalid([] { Device::from_pci_bus_id("0000:18:00.0 "); },
                         {"Device::from_pci_bus_id", "\"0000:18:00.0 \"", "not a PCI bus id"});
    test::expect_invalid([] { Device::from_pci_bus_id("gpu0"); }, {"not a PCI bus id"});
    test::expect_invalid([] { Device::from_pci_bus_id(std::string(65, '0')); },
                         {"65 characters", "at most 64"});
}

}  // namespace
