/// @file
/// Checked loading of untrusted code: the code is loaded first in a separate probe process, so
/// that a driver crash on hostile contents ends that process, not the caller's.
///
/// Loading checks the container structure of every cubin and fatbin before the driver sees it
/// (see ObjectCode::load), which removes the crashes that malformed tables cause. A driver may
/// still crash on well-formed but nonsensical contents (changed instruction or attribute bytes);
/// for code from an untrusted source, checked_load() probes first. The probe is the program
/// cudacore-load-probe, installed with the library (libexec/cudacore/) and built beside it.
///
/// Verdicts are cached in this process by the code's hash (XXH3-128 of the bytes), its type and
/// the device: probing the same code again costs a hash. Thread-safe.
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
