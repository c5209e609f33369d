// Steps 0..count-1 run on up to `workers` threads (the calling thread is one of them), handed out
// in increasing order. A step returns false to stop the handing out: every step numbered lower
// than it has started already and still runs to its end, so the lowest failing step is always
// among those that ran; higher ones not yet started are skipped. A step must not throw.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>

namespace cudacore::detail {

void run_steps(std::size_t count, unsigned workers, const std::function<bool(std::size_t)>& step);

// The same, with the other workers joining only when steps are still left `helpers_after` after
// the start: the calling thread runs the steps one after another until then. Short work (steps
// that would spend longer waiting on each other's locks than they run, as NVRTC's threads do)
// then runs exactly as a plain loop, and long work still spreads, started `helpers_after` late.
// One watcher thread waits for the moment; it is woken as soon as the steps are done. A
// `helpers_after` of zero or less is run_steps above.
void run_steps(std::size_t count, unsigned workers, std::chrono::nanoseconds helpers_after,
               const std::function<bool(std::size_t)>& step);

}  // namespace cudacore::detail
