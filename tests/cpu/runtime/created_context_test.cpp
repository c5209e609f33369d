// Contexts without a GPU: ContextOptions turn into cuCtxCreate flags and back, bad flags and
// scheduling values are refused by name, and a closed Context refuses every call before the
// driver is reached.
#include "test_support.hpp"

#include "cudacore/context.hpp"
#include "cudacore/current_context_scope.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/event.hpp"
#include "cudacore/graph.hpp"
#include "cudacore/legacy_pinned_memory_resource.hpp"
#include "cudacore/stream.hpp"
#include "cudacore/synchronous_memory_resource.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"

#include <memory>

namespace {

using namespace cudacore;

TEST(ContextOptions, TurnIntoFlagsAndBack) {
    struct Case {
        ContextScheduling scheduling;
        unsigned flag;
    };
    for (const Case& c : {Case{ContextScheduling::automatic, CU_CTX_SCHED_AUTO},
                          Case{ContextScheduling::spin, CU_CTX_SCHED_SPIN},
                          Case{ContextScheduling::yield, CU_CTX_SCHED_YIELD},
                          Case{ContextScheduling::blocking_sync, CU_CTX_SCHED_BLOCKING_SYNC}}) {
        const ContextOptions options{.scheduling = c.scheduling};
        EXPECT_EQ(options.flags(), c.flag);
        EXPECT_EQ(ContextOptions::from_flags(c.flag).scheduling, c.scheduling);
    }
    const ContextOptions all{.scheduling = ContextScheduling::blocking_sync,
                             .map_host = true,
                             .lmem_resize_to_max = true,
                             .sync_memops = true};
    const unsigned flags = all.flags();
    EXPECT_EQ(flags, unsigned{CU_CTX_SCHED_BLOCKING_SYNC | CU_CTX_MAP_HOST |
                              CU_CTX_LMEM_RESIZE_TO_MAX | CU_CTX_SYNC_MEMOPS});
    const ContextOptions back = ContextOptions::from_flags(flags);
    EXPECT_EQ(back.scheduling, ContextScheduling::blocking_sync);
    EXPECT_TRUE(back.map_host);
    EXPECT_TRUE(back.lmem_resize_to_max);
    EXPECT_TRUE(back.sync_memops);
    EXPECT_FALSE(back.sm_count.has_value());
    const ContextOptions none = ContextOptions::from_flags(0);
    EXPECT_EQ(none.scheduling, ContextScheduling::automatic);
    EXPECT_FALSE(none.map_host || none.lmem_resize_to_max || none.sync_memops);
}

TEST(ContextOptions, RefuseWhatTheDriverWouldNot) {
    // Two scheduling bits at once (spin + yield; CU_CTX_SCHED_MASK itself).
    test::expect_invalid([] { ContextOptions::from_flags(CU_CTX_SCHED_SPIN | CU_CTX_SCHED_YIELD); },
                         {"ContextOptions::from_flags", "0x3", "more than one scheduling bit"});
    test::expect_invalid([] { ContextOptions::from_flags(CU_CTX_SCHED_MASK); },
                         {"more than one scheduling bit"});
    // Bits the options have no field for: coredump, and beyond the driver's mask.
    test::expect_invalid([] { ContextOptions::from_flags(CU_CTX_COREDUMP_ENABLE); },
                         {"ContextOptions::from_flags", "0x20", "does not know"});
    test::expect_invalid([] { ContextOptions::from_flags(0x100 | CU_CTX_SCHED_SPIN); },
                         {"0x101", "(0x100)"});
    test::expect_invalid(
        [] { (void)ContextOptions{.scheduling = static_cast<ContextScheduling>(4)}.flags(); },
        {"ContextOptions::scheduling is 4", "blocking_sync"});
}

// A context the caller owns (not retained, not created): closing it calls no driver.
Context fake_context() {
    auto box = std::make_shared<detail::ContextBox>();
    box->handle = reinterpret_cast<CUcontext>(0x1234);
    box->retained = false;
    return detail::BoxAccess::make<Context>(std::move(box));
}

TEST(Context, AClosedContextRefusesEveryCall) {
    Context closed = fake_context();
    const Context copy = closed;
    closed.close();
    EXPECT_TRUE(copy.is_closed());  // every copy is closed with it
    EXPECT_TRUE(closed.is_closed());
    EXPECT_FALSE(closed.is_created());
    EXPECT_EQ(closed.handle(), nullptr);
    test::expect_invalid([&] { closed.create_stream(); }, {"Context::create_stream", "closed"});
    test::expect_invalid([&] { closed.create_event(); }, {"Context::create_event", "closed"});
    test::expect_invalid([&] { closed.sync(); }, {"Context::sync", "closed"});
    test::expect_invalid([&] { (void)closed.flags(); }, {"Context::flags", "closed"});
    test::expect_invalid([&] { (void)closed.sm_count(); }, {"Context::sm_count", "closed"});
    test::expect_invalid([&] { (void)closed.api_version(); }, {"Context::api_version", "closed"});
    test::expect_invalid([&] { (void)closed.device(); }, {"Context::device", "closed"});
    test::expect_invalid([&] { closed.set_current(); }, {"Context::set_current", "closed"});
    test::expect_invalid([&] { CurrentContextScope scope(closed); },
                         {"CurrentContextScope", "closed"});
    test::expect_invalid([&] { SynchronousMemoryResource memory(closed); },
                         {"SynchronousMemoryResource", "closed"});
    test::expect_invalid([&] { LegacyPinnedMemoryResource memory(closed); },
                         {"LegacyPinnedMemoryResource", "closed"});
    test::expect_invalid([&] { Graph::create(closed); }, {"Graph::create", "closed"});
}

TEST(Context, CloseIsIdempotentAndResetLeavesAnEmptyObject) {
    Context context = fake_context();
    context.close();
    context.close();
    EXPECT_TRUE(context.is_closed());
    Context kept = fake_context();
    Context dropped = kept;
    dropped.reset();
    EXPECT_FALSE(dropped.is_closed());
    EXPECT_FALSE(kept.is_closed());
    EXPECT_EQ(kept.handle(), reinterpret_cast<CUcontext>(0x1234));
    test::expect_invalid([&] { dropped.sync(); }, {"Context::sync", "is empty (moved from or reset"});
}

}  // namespace
