#include "support/thread_block_pool.hpp"

#include <vector>

namespace cudacore::detail {

namespace {
// Set once this thread's owner is destroyed. Trivially destructible (constant-initialised TLS),
// so it can be read at any point of exit: boxes freed by static or thread_local destructors
// that run after the owner (a static Kernel's weak reference to its code, say) must not use it.
thread_local bool owner_destroyed = false;

// The lists in use on this thread; empties and closes them at thread exit.
struct ThreadBlockOwner {
    std::vector<ThreadBlockList*> lists;
    ~ThreadBlockOwner() {
        owner_destroyed = true;
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
}  // namespace

void register_thread_block_list(ThreadBlockList& list) {
    // After the owner is gone (thread or process exit), a list first used now is closed at once:
    // its blocks go straight to operator delete.
    if (owner_destroyed) {
        list.state = 2;
        return;
    }
    static thread_local ThreadBlockOwner owner;
    owner.lists.push_back(&list);
    list.state = 1;
}

}  // namespace cudacore::detail
