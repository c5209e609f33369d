// Per-thread state that must be handed back or freed when its thread exits, while destructors
// that run during that exit (thread_local ones, or the main thread's at process exit) may still
// reach it. Each such slot is trivially destructible TLS (usable at any point of exit; the
// default TLS model, so that the library loads with dlopen) with a ThreadSlot state; the one owner below, built at a thread's first registration,
// calls every registered cleanup at that thread's exit. After that a slot is kExiting and its
// users fall back to the shared path (operator delete, the shared list, no cache).
#pragma once

#include <cstdint>

namespace cudacore::detail {

enum ThreadSlot : std::uint8_t {
    kSlotUnused = 0,   // not registered on this thread yet
    kSlotLive = 1,     // registered: the cleanup runs at thread exit
    kSlotExiting = 2,  // the cleanup ran (or the thread was already exiting): do not keep state
};

// Has `cleanup(slot)` called at the calling thread's exit, in reverse order of registration.
// Returns false, registering nothing, once the thread's cleanups have begun to run (or in the
// unlikely case that a thread registers more than a dozen slots): the caller then keeps
// nothing per-thread.
bool at_thread_exit(void (*cleanup)(void* slot) noexcept, void* slot) noexcept;

// Registers `slot` (a struct with a ThreadSlot `state`) for `cleanup` at thread exit and sets its
// state: kSlotLive, or kSlotExiting when the thread is already exiting.
template <class Slot>
ThreadSlot register_thread_slot(Slot& slot, void (*cleanup)(void* slot) noexcept) noexcept {
    slot.state = at_thread_exit(cleanup, &slot) ? kSlotLive : kSlotExiting;
    return static_cast<ThreadSlot>(slot.state);
}

}  // namespace cudacore::detail
