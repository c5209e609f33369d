// How a program (the CLI) ends on SIGINT, SIGTERM, SIGHUP, SIGALRM, SIGUSR1 and SIGUSR2: the
// registered temporaries (removed_on_signal.hpp) are removed, then the process ends by that same
// signal with its default action, so that the shell sees 130, 143, 129..., as for any program a
// signal ended.
//
// Not a signal handler: the signals are blocked in every thread and taken by one thread
// with sigwait, which works whatever their dispositions are, and a signal that came stays
// pending until that thread takes it, which termination_requested() sees. (NVRTC's own SIGINT
// and SIGTERM handlers, which call exit(4), never get in: see loader/signal_imports.hpp.)
#pragma once

namespace cudacore::detail {

// Blocks those signals in the calling thread (and so in every thread it starts
// afterwards) and starts the thread that waits for them. Call it first thing in main, before any
// thread exists. A signal that was ignored when this is called (SIGINT and SIGHUP in a
// background job of a non-interactive shell, nohup's SIGHUP) stays ignored. Children started
// by run_child_process get an empty signal mask. False when the thread cannot be started (no
// process to be had under ulimit -u): the signals are then unblocked again and end the process
// as before, without the removal. Never throws.
bool end_by_signal_after_removing_temporaries() noexcept;

// In a process that called end_by_signal_after_removing_temporaries: whether one of the signals
// is pending or being handled, i.e. the process is about to end by it. False otherwise.
// Async-signal-safe.
bool termination_requested() noexcept;

// Where a result is about to be made visible (an atomic write's rename): when the process is
// ending by a signal, waits for that end instead of returning, so that a command a signal ended
// leaves no output made after the signal came. Returns at once otherwise.
void wait_if_terminating() noexcept;

}  // namespace cudacore::detail
