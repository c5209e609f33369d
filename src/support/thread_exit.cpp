#include "support/thread_exit.hpp"

namespace cudacore::detail {

namespace {

// A thread registers one slot per per-thread cache (five or so in all).
constexpr int kMostSlots = 16;

struct ThreadExitList {
    void (*cleanup[kMostSlots])(void*) noexcept = {};
    void* slot[kMostSlots] = {};
    int count = 0;
    bool exiting = false;
};
// Trivially destructible (constant-initialised TLS): readable at any point of exit. Touched only
// at registration and exit, so the default TLS model: no static TLS taken from a dlopen'ed library.
thread_local ThreadExitList exit_list;

// Built at a thread's first registration, so destroyed at its exit.
struct ThreadExitOwner {
    ~ThreadExitOwner() {
        exit_list.exiting = true;
        while (exit_list.count > 0) {
            const int last = --exit_list.count;
            exit_list.cleanup[last](exit_list.slot[last]);
        }
    }
};

}  // namespace

bool at_thread_exit(void (*cleanup)(void*) noexcept, void* slot) noexcept {
    if (exit_list.exiting || exit_list.count == kMostSlots) return false;
    if (exit_list.count == 0) {
        static thread_local ThreadExitOwner owner;
        (void)owner;
    }
    exit_list.cleanup[exit_list.count] = cleanup;
    exit_list.slot[exit_list.count] = slot;
    ++exit_list.count;
    return true;
}

}  // namespace cudacore::detail
