#include "support/thread_block_pool.hpp"

#include <vector>

namespace cudacore::detail {

namespace {
// The lists in use on this thread; empties and closes them at thread exit.
struct ThreadBlockOwner {
    std::vector<ThreadBlockList*> lists;
    ~ThreadBlockOwner() {
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
    static thread_local ThreadBlockOwner owner;
    owner.lists.push_back(&list);
    list.state = 1;
}

}  // namespace cudacore::detail
