#include "support/thread_block_pool.hpp"

namespace cudacore::detail {

namespace {

// At thread exit: closed first, so that blocks freed from here on go to operator delete.
void empty_block_list(void* slot) noexcept {
    auto& list = *static_cast<ThreadBlockList*>(slot);
    list.state = kSlotExiting;
    while (list.head) {
        void* next = *static_cast<void**>(list.head);
        ::operator delete(list.head);
        list.head = next;
    }
    list.count = 0;
}

void empty_sized_blocks(void* slot) noexcept {
    auto& blocks = *static_cast<ThreadSizedBlocks*>(slot);
    blocks.state = kSlotExiting;
    for (int i = 0; i < ThreadSizedBlocks::kSlots; ++i) {
        ::operator delete(blocks.block[i]);
        blocks.block[i] = nullptr;
    }
}

}  // namespace

bool register_thread_block_list(ThreadBlockList& list) noexcept {
    return register_thread_slot(list, empty_block_list) == kSlotLive;
}

void register_thread_sized_blocks(ThreadSizedBlocks& blocks) noexcept {
    register_thread_slot(blocks, empty_sized_blocks);
}

}  // namespace cudacore::detail
