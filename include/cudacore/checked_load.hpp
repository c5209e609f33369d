/// @file
/// Checked loading of untrusted code: loaded first in a probe process (cudacore-load-probe), so a
/// driver crash on hostile contents ends that process, not the caller's. Verdicts are cached by
/// the code's hash, type and device. Thread-safe.
#pragma once

#include "cudacore/object_code.hpp"

#include <chrono>
#include <filesystem>
#include <string>

namespace cudacore {

/// Options of checked_load().
struct LoadProbeOptions {
    /// The probe program; empty: $CUDACORE_LOAD_PROBE, else the installed cudacore-load-probe.
    std::filesystem::path probe_program{};
    /// A probe still running after this long is killed, and the code deemed unsafe.
    std::chrono::milliseconds timeout{60'000};
};

/// What the probe process found when it loaded the code.
struct LoadProbeVerdict {
    /// The probe loaded the code (on the current device) and exited normally.
    bool loadable = false;
    bool crashed = false;  ///< the probe was killed by a signal, or timed out
    /// How the probe failed or ended ("killed by signal 11 (Segmentation fault)").
    std::string detail{};
    bool cached = false;  ///< taken from an earlier probe of the same code in this process
};

/// Probes loading `code` on the current device in the probe process (malformed code is refused
/// here first). LoaderError when the probe program cannot be started.
LoadProbeVerdict probe_load(const ObjectCode& code, const LoadProbeOptions& options = {});

/// probe_load(), then code.load() here unless the probe crashed or timed out (InvalidArgumentError
/// naming how it ended).
void checked_load(const ObjectCode& code, const LoadProbeOptions& options = {});

}  // namespace cudacore
