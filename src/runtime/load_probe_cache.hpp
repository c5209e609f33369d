// Test and benchmark hook of checked_load.cpp: the verdicts cached so far are forgotten, so that
// the next probe_load of any code runs the probe again.
#pragma once

namespace cudacore::detail {

void forget_load_probe_verdicts() noexcept;

}  // namespace cudacore::detail
