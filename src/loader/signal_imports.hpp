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
//
// NVRTC does this once per process, in its first compile, which another part of the program may
// be running (NVRTC opened by itself) at the moment cudacore opens the same NVRTC: its handler
// and SIG_IGN may then be in force already, put there through the real calls, and only the calls
// that put back the program's dispositions come through the pointed imports. Those are made.
#pragma once

namespace cudacore::detail {

// Points the signal() and sigaction() imports of the loaded library that holds `address` (its
// relocation slots, PLT and GOT) at functions that report the current disposition and change
// nothing: from then on, whatever that library asks, every signal keeps the disposition the
// program gave it. The one call that still changes a disposition is one that puts back what the
// library replaced through the real calls before the pointing (its own handler, or SIG_IGN, in
// force): it is made as asked, so the program gets its disposition back as the library saved it
// (signal() keeps no flags or mask). Other libraries and the program itself are untouched.
// Returns how many slots were pointed (0 when the library imports neither, on a machine whose
// relocations this does not know, or when `address` is in no loaded library). Call it once per library, right after
// opening it: before any thread of cudacore calls into it. Never throws.
int keep_signal_dispositions(const void* address) noexcept;

}  // namespace cudacore::detail
