// Where buffer boxes live: slabs that are never freed, so that the exit handler can walk every box
// there is without a list that allocations join and frees leave. Each thread keeps up to
// BufferBoxCache::kKept free boxes (buffer_box.hpp, the hot path); the rest, and a finished
// thread's, wait in one shared free list. Memory held: the most boxes ever alive at once, about
// 128 bytes each.
#include "memory/buffer_box.hpp"

#include <mutex>
#include <new>
#include <thread>
#include <type_traits>

namespace cudacore::detail {

namespace {

constexpr int kSlabBoxes = 64;

struct BufferBoxSlab {
    BufferBox boxes[kSlabBoxes];
    BufferBoxSlab* next = nullptr;
};

// Constant-initialised and trivially destructible: usable from any destructor at any point of
// exit, with no guard to test.
struct BufferBoxArena {
    std::mutex mutex;               // guards `free` (a few pointer updates at a time)
    BufferBox* free = nullptr;      // boxes given back by threads whose cache was full or gone
    int free_count = 0;
    std::atomic<BufferBoxSlab*> slabs{nullptr};  // only ever grows; read without the lock
};
static_assert(std::is_trivially_destructible_v<BufferBoxArena>);
constinit BufferBoxArena arena;

// Hands this thread's free boxes to the shared list when the thread exits.
void hand_back_cache(void* slot) noexcept {
    BufferBoxCache& cache = *static_cast<BufferBoxCache*>(slot);
    cache.state = kSlotExiting;
    if (!cache.head) return;
    BufferBox* last = cache.head;
    while (last->next_free) last = last->next_free;
    std::lock_guard lock(arena.mutex);
    last->next_free = arena.free;
    arena.free = cache.head;
    arena.free_count += cache.count;
    cache.head = nullptr;
    cache.count = 0;
}

}  // namespace

BufferBox* take_buffer_box_slow() {
    BufferBoxCache& cache = buffer_box_cache();
    if (cache.state == kSlotUnused) register_thread_slot(cache, hand_back_cache);
    {
        // Up to half a cache's worth from the shared list, the first for the caller.
        std::lock_guard lock(arena.mutex);
        if (BufferBox* box = arena.free) {
            arena.free = box->next_free;
            --arena.free_count;
            for (int i = 0; cache.state == kSlotLive && i < BufferBoxCache::kKept / 2 && arena.free; ++i) {
                BufferBox* more = arena.free;
                arena.free = more->next_free;
                --arena.free_count;
                more->next_free = cache.head;
                cache.head = more;
                ++cache.count;
            }
            return box;
        }
    }
    // A new slab: the first box for the caller, the rest for this thread's cache (or the shared
    // list, when the thread is exiting).
    auto* slab = new BufferBoxSlab;
    BufferBoxSlab* head = arena.slabs.load(std::memory_order_relaxed);
    do slab->next = head;
    while (!arena.slabs.compare_exchange_weak(head, slab, std::memory_order_release,
                                              std::memory_order_relaxed));
    for (int i = kSlabBoxes - 1; i >= 1; --i) give_back_buffer_box_slow(&slab->boxes[i]);
    return &slab->boxes[0];
}

void give_back_buffer_box_slow(BufferBox* box) noexcept {
    BufferBoxCache& cache = buffer_box_cache();
    if (cache.state == kSlotUnused) register_thread_slot(cache, hand_back_cache);
    if (cache.state == kSlotLive && cache.count < BufferBoxCache::kKept) {
        box->next_free = cache.head;
        cache.head = box;
        ++cache.count;
        return;
    }
    // A full cache (a thread that frees what other threads allocate) gives half of it back with
    // this box, in one hold of the lock: once per kKept / 2 boxes rather than once per box.
    BufferBox* last = box;
    int moved = 1;
    for (int i = 0; cache.state == kSlotLive && i < BufferBoxCache::kKept / 2 && cache.head; ++i) {
        BufferBox* more = cache.head;
        cache.head = more->next_free;
        --cache.count;
        last->next_free = more;
        last = more;
        ++moved;
    }
    std::lock_guard lock(arena.mutex);
    last->next_free = arena.free;
    arena.free = box;
    arena.free_count += moved;
}

void for_each_buffer_box(void (*visit)(BufferBox&) noexcept) noexcept {
    for (BufferBoxSlab* slab = arena.slabs.load(std::memory_order_acquire); slab; slab = slab->next)
        for (BufferBox& box : slab->boxes) visit(box);
}

void BufferBox::wait_while_taken() const noexcept {
    for (int spins = 0; state.load(std::memory_order_acquire) == kTaking; ++spins)
        if (spins >= 64) std::this_thread::yield();
}

}  // namespace cudacore::detail
