// An allocator for std::allocate_shared that keeps a few freed blocks per thread and type, so
// that a small shared box made and dropped in a loop (an Event's box) costs no malloc and free
// (on an H100, event_create 0.44x raw with it, 0.56-0.59x with std::make_shared). An ObjectCode's
// holder (one per memory-cache hit), the boxes a capture makes and drops, and every owning
// object's shared state (BoxAccess::make) use it too; the boxes of ObjectCode from a moved string
// gained under 3% and use std::make_shared.
// A block freed on another thread joins that thread's list; each list is bounded. The
// per-thread list is trivially destructible TLS of the default model (no static TLS, so the
// library loads with dlopen; one __tls_get_addr call to reach it); its blocks are freed at thread exit
// (support/thread_exit.hpp), after which blocks go straight to operator delete (also those of a
// list first used then: boxes may be freed by any destructor, in any order, at thread or process
// exit).
#pragma once

#include "support/thread_exit.hpp"
#include "support/tls_address.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <utility>

namespace cudacore::detail {

struct ThreadBlockList {
    void* head = nullptr;
    int count = 0;
    std::uint8_t state = kSlotUnused;  // a ThreadSlot
};

// Registers `list` to be emptied (and closed) at this thread's exit; whether it is now live.
// Slow path, once per thread and list.
bool register_thread_block_list(ThreadBlockList& list) noexcept;

template <class T>
class ThreadBlockPool {
public:
    using value_type = T;

    ThreadBlockPool() noexcept = default;
    template <class U>
    ThreadBlockPool(const ThreadBlockPool<U>&) noexcept {}

    T* allocate(std::size_t n) {
        ThreadBlockList& list = blocks();
        if (n == 1 && list.head) [[likely]] {
            void* block = list.head;
            list.head = *static_cast<void**>(block);
            --list.count;
            return static_cast<T*>(block);
        }
        return static_cast<T*>(::operator new(n * sizeof(T)));
    }

    void deallocate(T* pointer, std::size_t n) noexcept {
        ThreadBlockList& list = blocks();
        if (n == 1 && list.count < kKept) [[likely]] {
            if (list.state == kSlotLive ||
                (list.state == kSlotUnused && register_thread_block_list(list))) {
                *reinterpret_cast<void**>(pointer) = list.head;
                list.head = pointer;
                ++list.count;
                return;
            }
        }
        ::operator delete(static_cast<void*>(pointer));
    }

    template <class U>
    bool operator==(const ThreadBlockPool<U>&) const noexcept { return true; }

private:
    static_assert(sizeof(T) >= sizeof(void*), "a block must hold the list's link");
    static constexpr int kKept = 64;

    static ThreadBlockList& blocks() noexcept {
        static thread_local ThreadBlockList list;
        return tls_address(list);
    }
};

// A few freed blocks of any size per thread, for values that copy a caller's bytes into their
// own block (an ObjectCode from bytes): one made and dropped in a loop reuses its block instead
// of a malloc and free of a large chunk (on an H100, object_code_from_bytes 0.59x raw with
// them, 1.10x with operator new, 1.09-1.36x with a separate std::string copy). A block
// is kept only up to kLargest bytes, and only kSlots of them, so a thread holds at most 1 MiB.
struct ThreadSizedBlocks {
    static constexpr int kSlots = 4;
    static constexpr std::size_t kLargest = 256 * 1024;
    void* block[kSlots] = {};
    std::size_t size[kSlots] = {};
    std::uint8_t state = kSlotUnused;  // a ThreadSlot
};

// This thread's sized blocks: constant-initialised TLS, no guard.
inline ThreadSizedBlocks& thread_sized_blocks() noexcept {
    static thread_local ThreadSizedBlocks blocks;
    return tls_address(blocks);
}
// Registers `blocks` to be emptied (and closed) at this thread's exit, as for a block list.
void register_thread_sized_blocks(ThreadSizedBlocks& blocks) noexcept;

// A block of at least `size` bytes: a kept one no more than twice as large, else operator new.
inline void* take_sized_block(std::size_t size) {
    ThreadSizedBlocks& kept = thread_sized_blocks();
    for (int i = 0; i < ThreadSizedBlocks::kSlots; ++i) {
        if (kept.block[i] && kept.size[i] >= size && kept.size[i] / 2 <= size) {
            void* block = kept.block[i];
            kept.block[i] = nullptr;
            return block;
        }
    }
    return ::operator new(size);
}

// Gives back a block taken with at least `size` bytes: kept for this thread when there is room
// (and the thread is not exiting), else deleted.
inline void give_back_sized_block(void* block, std::size_t size) noexcept {
    ThreadSizedBlocks& kept = thread_sized_blocks();
    if (size <= ThreadSizedBlocks::kLargest && kept.state != kSlotExiting) [[likely]] {
        // First block kept on this thread: it must be freed at exit.
        if (kept.state == kSlotUnused) register_thread_sized_blocks(kept);
        if (kept.state == kSlotLive) {
            for (int i = 0; i < ThreadSizedBlocks::kSlots; ++i) {
                if (kept.block[i]) continue;
                kept.block[i] = block;
                kept.size[i] = size;
                return;
            }
        }
    }
    ::operator delete(block);
}

// A T made from `args` in a shared box from this thread's pool (see above).
template <class T, class... Args>
std::shared_ptr<T> make_pooled(Args&&... args) {
    return std::allocate_shared<T>(ThreadBlockPool<T>(), std::forward<Args>(args)...);
}

}  // namespace cudacore::detail
