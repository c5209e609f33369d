// EventRecycler (runtime/release/event_recycler.hpp), the completed events a context keeps for reuse:
// bounded per kind, kinds kept apart, and under many threads keeping and taking at once no event
// is handed out twice or lost. The handles are stand-ins (addresses of a local array): the
// recycler never calls the driver, so no GPU is needed; scripts/tsan.sh runs this under
// ThreadSanitizer.
#include "runtime/release/event_recycler.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

using namespace cudacore;
using namespace cudacore::detail;

namespace {

constexpr int kKept = 128;  // per kind (event_recycler.hpp)

}  // namespace

TEST(EventRecycler, KindsFollowTheOptionsAndInterprocessEventsAreNeverKept) {
    EventOptions options;
    EXPECT_EQ(EventRecycler::kind_of(options), 0);
    options.timing_enabled = true;
    const int timing = EventRecycler::kind_of(options);
    options.blocking_sync = true;
    const int both = EventRecycler::kind_of(options);
    options.timing_enabled = false;
    const int blocking = EventRecycler::kind_of(options);
    EXPECT_EQ((std::set<int>{0, timing, both, blocking}).size(), 4u);
    options.ipc_enabled = true;
    EXPECT_EQ(EventRecycler::kind_of(options), -1);
}

TEST(EventRecycler, KeepsAtMostItsBoundPerKindAndGivesBackOnlyThatKind) {
    std::vector<char> storage(2 * kKept + 1);
    EventRecycler recycler;
    for (int i = 0; i <= kKept; ++i)
        EXPECT_EQ(recycler.keep(reinterpret_cast<CUevent>(&storage[i]), 1), i < kKept) << i;
    EXPECT_EQ(recycler.kept(1), kKept);
    EXPECT_EQ(recycler.kept(0), 0);
    EXPECT_EQ(recycler.take(0), nullptr) << "an event of another kind was given back";
    std::set<CUevent> taken;
    while (CUevent event = recycler.take(1)) EXPECT_TRUE(taken.insert(event).second);
    EXPECT_EQ(taken.size(), static_cast<std::size_t>(kKept));
    EXPECT_EQ(recycler.kept(1), 0);
}

TEST(EventRecycler, ManyThreadsKeepingAndTakingNeverShareOrLoseAnEvent) {
    constexpr int kThreads = 4;
    constexpr int kPerThread = 96;  // more than a kind holds, fewer than all kinds
    constexpr int kKinds = 4;
    std::vector<char> storage(kThreads * kPerThread);
    // Whether each stand-in event is out (held by a thread) rather than kept.
    std::vector<std::atomic<bool>> out(storage.size());
    auto index_of = [&](CUevent event) { return reinterpret_cast<char*>(event) - storage.data(); };
    EventRecycler recycler;
    std::atomic<int> shared{0};
    std::vector<std::thread> threads;
    std::vector<std::vector<CUevent>> held(kThreads);
    for (int t = 0; t < kThreads; ++t) {
        for (int i = 0; i < kPerThread; ++i) {
            held[t].push_back(reinterpret_cast<CUevent>(&storage[t * kPerThread + i]));
            out[t * kPerThread + i] = true;
        }
    }
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            std::vector<CUevent>& mine = held[t];
            const int kind = t % 2;  // two threads per kind: events move between them
            for (int round = 0; round < 2000; ++round) {
                // Give back a few (as events complete), then take a few (as new ones are made).
                for (int i = 0; i < 3 && !mine.empty(); ++i) {
                    CUevent event = mine.back();
                    out[index_of(event)] = false;
                    if (recycler.keep(event, kind)) {
                        mine.pop_back();
                    } else {
                        out[index_of(event)] = true;  // full: the caller destroys it (kept here)
                        break;
                    }
                }
                for (int i = 0; i < 3; ++i) {
                    CUevent event = recycler.take(kind);
                    if (!event) break;
                    if (out[index_of(event)].exchange(true)) shared.fetch_add(1);
                    mine.push_back(event);
                }
            }
        });
    }
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(shared.load(), 0) << "an event was handed to two holders";
    std::set<CUevent> everything;
    for (const auto& mine : held)
        for (CUevent event : mine) EXPECT_TRUE(everything.insert(event).second);
    int drained = 0;
    recycler.drain([&](CUevent event) {
        ++drained;
        EXPECT_FALSE(out[index_of(event)].load()) << "a kept event was also held";
        EXPECT_TRUE(everything.insert(event).second);
    });
    EXPECT_EQ(everything.size(), storage.size()) << "an event was lost";
    for (int kind = 0; kind < kKinds; ++kind) EXPECT_EQ(recycler.kept(kind), 0);
    EXPECT_LE(drained, kKinds * kKept);
}
