// Keeping a library we load from changing how the process handles signals.
//
// NVRTC replaces the process's SIGINT and SIGTERM handlers with its own (which call exit(4))
// during its first compile's front end, sets SIGXFSZ to SIG_IGN meanwhile, and puts back what
// it saved afterwards with signal(), which drops the flags and mask of a handler installed with
// sigaction and undoes any change made meanwhile. A signal in that window ended the user's
// process with status 4 (or hung it: exit handlers inside a signal handler, waiting on a lock
// NVRTC holds) instead of running the user's handler or its default action. Dispositions are
// process-wide, so no per-thread measure helps, and NVRTC's flow callback runs only in the back
// end, after the window.
#pragma once

namespace cudacore::detail {

// Points the signal() and sigaction() imports of the loaded library that holds `address` (its
// relocation slots, PLT and GOT) at functions that report the current disposition and change
// nothing: from then on, whatever that library asks, every signal keeps the disposition the
// program gave it. Other libraries and the program itself are untouched. Returns how many slots
// were pointed (0 when the library imports neither, on a machine whose relocations this does not
// know, or when `address` is in no loaded library). Call it once per library, right after
// opening it and before any thread can call into it. Never throws.
int keep_signal_dispositions(const void* address) noexcept;

}  // namespace cudacore::detail
