// The per-thread block pool behind ObjectCode, Event and Buffer boxes: a freed block is reused
// by the next allocation on the same thread, blocks freed on another thread are fine, and
// everything made and dropped on short-lived threads is released (run under LSan to see it).
#include "test_support.hpp"

#include "support/thread_block_pool.hpp"

#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

using cudacore::detail::ThreadBlockPool;

struct Box {
    std::string text;
    long value = 0;
};

std::shared_ptr<Box> make_box(long value) {
    auto box = std::allocate_shared<Box>(ThreadBlockPool<Box>());
    box->text = "box " + std::to_string(value);
    box->value = value;
    return box;
}

TEST(ThreadBlockPool, AFreedBlockIsReusedOnTheSameThread) {
    const void* first = make_box(1).get();  // made and dropped at once
    auto second = make_box(2);
    EXPECT_EQ(second.get(), first);
    EXPECT_EQ(second->value, 2);
    EXPECT_EQ(second->text, "box 2");
}

TEST(ThreadBlockPool, BoxesCrossThreadsAndShortLivedThreadsLeaveNothingBehind) {
    std::vector<std::shared_ptr<Box>> made_elsewhere;
    for (int t = 0; t < 4; ++t) {
        std::thread([&made_elsewhere, t] {
            std::vector<std::shared_ptr<Box>> local;
            for (int i = 0; i < 200; ++i) local.push_back(make_box(t * 1000 + i));
            made_elsewhere.push_back(local.front());  // outlives its thread
        }).join();
    }
    for (int t = 0; t < 4; ++t) EXPECT_EQ(made_elsewhere[t]->value, t * 1000);
    made_elsewhere.clear();  // freed here, on another thread than the one that made them
    std::vector<std::shared_ptr<Box>> again;
    for (int i = 0; i < 100; ++i) again.push_back(make_box(i));
    for (int i = 0; i < 100; ++i) EXPECT_EQ(again[i]->value, i);
}

}  // namespace
