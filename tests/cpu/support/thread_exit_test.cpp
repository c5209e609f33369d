// The one thread-exit owner behind every per-thread cache: each registered slot's cleanup runs
// when its thread exits, the last registered first; a slot registered once the thread's cleanups
// have begun (from a cleanup, or a destructor running after them) is refused and marked
// exiting, so its user keeps nothing per-thread.
#include "support/thread_exit.hpp"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace {

using cudacore::detail::kSlotExiting;
using cudacore::detail::kSlotLive;
using cudacore::detail::kSlotUnused;
using cudacore::detail::register_thread_slot;

struct Slot {
    std::uint8_t state = kSlotUnused;
    int id = 0;
    std::vector<int>* cleaned = nullptr;
};

void note_cleanup(void* slot) noexcept {
    auto& s = *static_cast<Slot*>(slot);
    s.cleaned->push_back(s.id);
    s.state = kSlotExiting;
}

TEST(ThreadExit, CleanupsRunAtThreadExitLastRegisteredFirst) {
    std::vector<int> cleaned;
    Slot first{kSlotUnused, 1, &cleaned}, second{kSlotUnused, 2, &cleaned};
    std::thread([&] {
        EXPECT_EQ(register_thread_slot(first, note_cleanup), kSlotLive);
        EXPECT_EQ(register_thread_slot(second, note_cleanup), kSlotLive);
        EXPECT_TRUE(cleaned.empty());  // nothing runs before the thread exits
    }).join();
    EXPECT_EQ(cleaned, (std::vector<int>{2, 1}));
    EXPECT_EQ(first.state, kSlotExiting);
    EXPECT_EQ(second.state, kSlotExiting);
}

Slot late;  // registered from a cleanup, while the thread exits

void register_late(void* slot) noexcept {
    note_cleanup(slot);
    register_thread_slot(late, note_cleanup);
}

TEST(ThreadExit, ASlotRegisteredWhileTheThreadExitsIsRefusedAndMarkedExiting) {
    std::vector<int> cleaned;
    Slot slot{kSlotUnused, 1, &cleaned};
    late = Slot{kSlotUnused, 2, &cleaned};
    std::thread([&] { register_thread_slot(slot, register_late); }).join();
    EXPECT_EQ(cleaned, (std::vector<int>{1}));  // the late slot's cleanup never ran
    EXPECT_EQ(late.state, kSlotExiting);
}

}  // namespace
