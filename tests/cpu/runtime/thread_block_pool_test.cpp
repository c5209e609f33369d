// The per-thread block pool behind Event boxes and every owning object's shared state: a freed
// block is reused by the next allocation on the same thread, blocks freed on another thread are
// fine, and
// everything made and dropped on short-lived threads is released (run under LSan to see it);
// a box freed at exit after the pool went away is freed plainly. The sized blocks behind values
// that copy bytes (an ObjectCode from bytes): reused when they fit, bounded in size and number.
#include "test_support.hpp"

#include "cudacore/context.hpp"
#include "cudacore/object_code.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"
#include "support/thread_block_pool.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include <memory>
#include <string>
#include <thread>
#include <vector>

// This thread's calls of operator new while `counting_news` is set (the program's other
// allocations go through uncounted).
thread_local bool counting_news = false;
thread_local long counted_news = 0;

void* operator new(std::size_t size) {
    if (counting_news) ++counted_news;
    if (void* memory = std::malloc(size ? size : 1)) return memory;
    throw std::bad_alloc();
}
void operator delete(void* memory) noexcept { std::free(memory); }
void operator delete(void* memory, std::size_t) noexcept { std::free(memory); }

namespace {

using cudacore::detail::ThreadBlockPool;
using cudacore::detail::ThreadSizedBlocks;
using cudacore::detail::give_back_sized_block;
using cudacore::detail::take_sized_block;
using cudacore::detail::thread_sized_blocks;

int kept_sized_blocks() {
    const ThreadSizedBlocks& kept = thread_sized_blocks();
    return static_cast<int>(std::count_if(std::begin(kept.block), std::end(kept.block),
                                          [](void* block) { return block != nullptr; }));
}

bool is_kept(const void* block) {
    const ThreadSizedBlocks& kept = thread_sized_blocks();
    return std::find(std::begin(kept.block), std::end(kept.block), block) != std::end(kept.block);
}

// Empties this thread's sized blocks, so that each test starts from none kept.
void drop_kept_sized_blocks() {
    ThreadSizedBlocks& kept = thread_sized_blocks();
    for (void*& block : kept.block) {
        ::operator delete(block);
        block = nullptr;
    }
}

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

// The shared state of an owning object (here a Context of a context its caller owns, so that
// no driver is called) is a pooled block: objects made and dropped in a loop (a capture's Graph
// and GraphExec, Events) allocate nothing for it once the first was dropped.
TEST(ThreadBlockPool, AnOwningObjectsSharedStateAllocatesNothingOnceOneWasDropped) {
    auto box = std::make_shared<cudacore::detail::ContextBox>();
    box->handle = reinterpret_cast<CUcontext>(0x1234);
    cudacore::detail::BoxAccess::make<cudacore::Context>(box);  // made and dropped: a block kept
    counted_news = 0;
    counting_news = true;
    for (int i = 0; i < 100; ++i) {
        const auto context = cudacore::detail::BoxAccess::make<cudacore::Context>(box);
        if (context.handle() != box->handle) ADD_FAILURE() << "another handle";
    }
    counting_news = false;
    EXPECT_EQ(counted_news, 0);
    EXPECT_EQ(box.use_count(), 1);  // every state dropped its share
}

// Any box may be freed by any destructor at exit, also after the pool's per-thread owner was
// destroyed, on a list of a kind this thread never freed before (as a static Kernel frees its
// code's block, held through a weak reference, inside exit()). Reaching the destroyed owner
// there corrupts the heap (AddressSanitizer reports a use after free).
TEST(ThreadBlockPoolDeathTest, ABoxFreedByAStaticAfterExitDestroyedThePoolOwner) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(
        {
            struct StaticBox {
                long a = 1;
            };
            // Destroyed by exit() after the main thread's thread_local objects (the owner).
            static std::shared_ptr<StaticBox> kept =
                std::allocate_shared<StaticBox>(ThreadBlockPool<StaticBox>());
            make_box(2);  // the main thread's owner exists
            std::exit(kept->a == 1 ? 0 : 3);
        },
        ::testing::ExitedWithCode(0), "");
}

}  // namespace

namespace {

TEST(ThreadSizedBlocks, AGivenBackBlockServesTheNextRequestThatFitsIt) {
    drop_kept_sized_blocks();
    void* block = take_sized_block(5000);
    std::memset(block, 1, 5000);
    give_back_sized_block(block, 5000);
    EXPECT_TRUE(is_kept(block));
    EXPECT_EQ(take_sized_block(5000), block);  // the same size
    EXPECT_FALSE(is_kept(block));
    give_back_sized_block(block, 5000);
    EXPECT_EQ(take_sized_block(2600), block);  // smaller, down to half
    give_back_sized_block(block, 5000);
    void* larger = take_sized_block(5001);  // larger: a new block
    EXPECT_NE(larger, block);
    EXPECT_TRUE(is_kept(block));
    void* much_smaller = take_sized_block(2400);  // under half: a new block too
    EXPECT_NE(much_smaller, block);
    EXPECT_TRUE(is_kept(block));
    ::operator delete(larger);
    ::operator delete(much_smaller);
    drop_kept_sized_blocks();
}

TEST(ThreadSizedBlocks, KeepsAtMostItsSlotsAndNoBlockOverItsLargestSize) {
    drop_kept_sized_blocks();
    void* large = take_sized_block(ThreadSizedBlocks::kLargest + 1);
    give_back_sized_block(large, ThreadSizedBlocks::kLargest + 1);  // deleted, not kept
    EXPECT_EQ(kept_sized_blocks(), 0);

    std::vector<void*> blocks;
    for (int i = 0; i <= ThreadSizedBlocks::kSlots; ++i) blocks.push_back(take_sized_block(1000));
    for (void* block : blocks) give_back_sized_block(block, 1000);
    EXPECT_EQ(kept_sized_blocks(), ThreadSizedBlocks::kSlots);
    for (int i = 0; i < ThreadSizedBlocks::kSlots; ++i) EXPECT_TRUE(is_kept(blocks[i]));
    EXPECT_FALSE(is_kept(blocks.back()));  // deleted: the slots were full
    drop_kept_sized_blocks();
}

TEST(ThreadSizedBlocks, AnObjectCodeMadeAndDroppedLeavesItsBlockToTheNextOne) {
    drop_kept_sized_blocks();
    std::string bytes(5000, 'a');
    const char* first = nullptr;
    {
        auto code = cudacore::ObjectCode::from_cubin(bytes, "first.cubin");
        first = code.code().data();
    }
    EXPECT_EQ(kept_sized_blocks(), 1);
    bytes.assign(5000, 'b');
    auto second = cudacore::ObjectCode::from_cubin(bytes, "second.cubin");
    EXPECT_EQ(second.code().data(), first);  // the block again, at the same offset
    EXPECT_EQ(second.code(), bytes);         // with the new bytes
    EXPECT_EQ(second.name(), "second.cubin");
    EXPECT_EQ(kept_sized_blocks(), 0);
}

TEST(ThreadSizedBlocks, BlocksKeptOnShortLivedThreadsAreFreedAtTheirExit) {
    // Leaks would show under LeakSanitizer; here the values made on each thread must stay whole
    // wherever they are dropped.
    std::vector<cudacore::ObjectCode> made_elsewhere;
    for (int t = 0; t < 4; ++t) {
        std::thread([&made_elsewhere, t] {
            for (int i = 0; i < 8; ++i) {
                const std::string bytes(3000 + i, 'x');  // an lvalue: copied into a sized block
                cudacore::ObjectCode::from_cubin(bytes);
            }
            EXPECT_GT(kept_sized_blocks(), 0);
            const std::string bytes(4000, char('0' + t));
            made_elsewhere.push_back(cudacore::ObjectCode::from_cubin(bytes));
        }).join();
    }
    for (int t = 0; t < 4; ++t) EXPECT_EQ(made_elsewhere[t].code(), std::string(4000, char('0' + t)));
    made_elsewhere.clear();  // kept by this thread now
    EXPECT_GT(kept_sized_blocks(), 0);
}

// As for the box pool: a value dropped by a static destructor after this thread's owner went
// away gives its block straight back to operator delete.
TEST(ThreadSizedBlocksDeathTest, AValueFreedByAStaticAfterExitDestroyedThePoolOwner) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(
        {
            const std::string kept_bytes = std::string(2000, 'k');
            const std::string dropped_bytes = std::string(2000, 'd');
            // Destroyed by exit() after the main thread's thread_local objects (the owner).
            static cudacore::ObjectCode kept = cudacore::ObjectCode::from_cubin(kept_bytes);
            cudacore::ObjectCode::from_cubin(dropped_bytes);  // the owner exists, a block is kept
            std::exit(kept.code() == kept_bytes ? 0 : 3);
        },
        ::testing::ExitedWithCode(0), "");
}

}  // namespace
