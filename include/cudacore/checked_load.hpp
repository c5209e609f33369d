/// @file
/// Checked loading of untrusted code: loaded first in a probe process (cudacore-load-probe,
/// installed in libexec/cudacore/), so a driver crash on hostile contents ends that process, not
/// the caller's. Verdicts are cached by the code's hash, type and device. Thread-safe.
#pragma once

#include "cudacore/object_code.hpp"

#include <chrono>
#include <filesystem>
#include <string>

namespace cudacore {

/// Options of checked_load().
struct LoadProbeOptions {
    /// The probe program. Empty: $CUDACORE_LOAD_PROBE when set, else cudacore-load-probe beside
    /// the library (a build tree) or in ../libexec/cudacore/ from it (an installation).
    std::filesystem::path probe_program{};
    /// A probe still running after this long is killed, and the code deemed unsafe.
    std::chrono::milliseconds timeout{60'000};
};

/// What the probe process found when it loaded the code.
struct LoadProbeVerdict {
    /// The probe loaded the code (on the current device) and exited normally.
    bool loadable = false;
    /// The probe was killed by a signal, or timed out: loading this code here is not safe.
    bool crashed = false;
    /// The probe's error when it failed cleanly, or how it ended ("killed by signal 11
    /// (Segmentation fault)", "timed out after 60000 ms"); empty when loadable.
    std::string detail{};
    /// Taken from an earlier probe of the same code in this process.
    bool cached = false;
};

/// Probes loading `code` on the current device in the probe process. Malformed code is refused
/// first, in this process, with the InvalidArgumentError that loading gives (no probe is run).
/// Throws LoaderError when the probe program cannot be found or started.
LoadProbeVerdict probe_load(const ObjectCode& code, const LoadProbeOptions& options = {});

/// probe_load(), then code.load() in this process unless the probe crashed or timed out
/// (InvalidArgumentError naming the code and how the probe ended). A probe that failed cleanly
/// (a driver error, no driver) leads to the same load here, which throws the same error with its
/// usual type.
void checked_load(const ObjectCode& code, const LoadProbeOptions& options = {});

}  // namespace cudacore
