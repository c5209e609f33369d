#include "support/thread_block_pool.hpp"

#include <vector>

namespace cudacore::detail {

namespace {
// Set once this thread's owner is destroyed. Trivially destructible (constant-initialised TLS),
// so it can be read at any point of exit: boxes freed by static or thread_local destructors
// that run after the owner (a static Kernel's weak reference to its code, say) must not use it.
thread_local bool owner_destroyed = false;

// The lists (and sized blocks) in use on this thread; empties and closes them at thread exit.
struct ThreadBlockOwner {
    std::vector<ThreadBlockList*> lists;
    ThreadSizedBlocks* sized = nullptr;
    ~ThreadBlockOwner() {
        owner_destroyed = true;
        if (sized) {
            sized->state = 2;
            for (int i = 0; i < ThreadSizedBlocks::kSlots; ++i) {
                ::operator delete(sized->block[i]);
                sized->block[i] = nullptr;
            }
        }
        for (ThreadBlockList* list : lists) {
            list->state = 2;
            while (list->head) {
                void* next = *static_cast<void**>(list->head);
                ::operator delete(list->head);
                list->head = next;
            }
            list->count = 0;
        }
    }
};

ThreadBlockOwner& thread_block_owner() {
    static thread_local ThreadBlockOwner owner;
    return owner;
}

}  // namespace

void register_thread_sized_blocks(ThreadSizedBlocks& blocks) noexcept {
    // As for a list: after the owner is gone, blocks go straight to operator delete.
    if (owner_destroyed) {
        blocks.state = 2;
        return;
    }
    thread_block_owner().sized = &blocks;
    blocks.state = 1;
}

void register_thread_block_list(ThreadBlockList& list) {
    // After the owner is gone (thread or process exit), a list first used now is closed at once:
    // its blocks go straight to operator delete.
    if (owner_destroyed) {
        list.state = 2;
        return;
    }
    thread_block_owner().lists.push_back(&list);
    list.state = 1;
}

}  // namespace cudacore::detail
