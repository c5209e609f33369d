// An allocator for std::allocate_shared that keeps a few freed blocks per thread and type, so
// that a small shared box made and dropped in a loop (an ObjectCode's state, an Event's box)
// costs no malloc and free. A block freed on another thread joins that thread's list; each
// list is bounded. The per-thread list is initial-exec TLS (a few instructions to reach, where
// the general model would call __tls_get_addr) and trivially destructible; a separate owner
// object frees its blocks at thread exit, after which blocks go straight to operator delete
// (also those of a list first used then: boxes may be freed by any destructor, in any order, at
// thread or process exit).
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <utility>

namespace cudacore::detail {

struct ThreadBlockList {
    void* head = nullptr;
    int count = 0;
    int state = 0;  // 0: not yet in use on this thread, 1: in use, 2: the thread is exiting
};

// Registers `list` to be emptied (and closed) at this thread's exit. Slow path, once per
// thread and list.
void register_thread_block_list(ThreadBlockList& list);

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
            if (list.state == 1 || (list.state == 0 && try_register(list))) {
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
        static thread_local ThreadBlockList list __attribute__((tls_model("initial-exec")));
        return list;
    }
    static bool try_register(ThreadBlockList& list) noexcept {
        try {
            register_thread_block_list(list);
            return list.state == 1;
        } catch (...) {
            return false;
        }
    }
};

// A T made from `args` in a shared box from this thread's pool (see above).
template <class T, class... Args>
std::shared_ptr<T> make_pooled(Args&&... args) {
    return std::allocate_shared<T>(ThreadBlockPool<T>(), std::forward<Args>(args)...);
}

}  // namespace cudacore::detail
