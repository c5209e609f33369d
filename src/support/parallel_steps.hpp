// Steps 0..count-1 run on up to `workers` threads (the calling thread is one of them), handed out
// in increasing order. A step returns false to stop the handing out: every step numbered lower
// than it has started already and still runs to its end, so the lowest failing step is always
// among those that ran; higher ones not yet started are skipped. A step must not throw.
#pragma once

#include <cstddef>
#include <functional>

namespace cudacore::detail {

void run_steps(std::size_t count, unsigned workers, const std::function<bool(std::size_t)>& step);

}  // namespace cudacore::detail
