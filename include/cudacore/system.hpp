/// @file
/// Process-wide facts about the CUDA driver, devices and compiler libraries. Thread-safe; the
/// driver calls throw NoDriverError without one, the compiler library calls LoaderError.
#pragma once

#include <compare>
#include <optional>
#include <string>
#include <vector>

namespace cudacore {

class Device;

namespace system {

/// Whether a usable CUDA driver is present (loads it on first call).
bool driver_available() noexcept;

/// The driver's CUDA version as an integer (13000 for 13.0).
int driver_version();

/// The path the driver was opened from.
std::string driver_path();

/// Number of CUDA devices (asked once per process).
int device_count();

/// Every device, by ordinal.
std::vector<Device> devices();

/// The CUDA version of the headers cudacore was built with.
int built_cuda_version() noexcept;

/// A compiler library's version, as it reports it.
struct LibraryVersion {
    int major = 0;  ///< major version (12 for CUDA 12.8's library)
    int minor = 0;  ///< minor version (8 for CUDA 12.8's library)
    /// Equal when every field is.
    bool operator==(const LibraryVersion&) const = default;
    /// Ordered field by field.
    auto operator<=>(const LibraryVersion&) const = default;
};

/// The version of the NVRTC cudacore opened, loading it on first call.
LibraryVersion nvrtc_version();
/// The version of the nvJitLink cudacore opened, loading it on first call.
LibraryVersion nvjitlink_version();

/// A library cudacore opens only when a feature needs it (nvFatbin, libNVVM).
struct OptionalLibraryVersion {
    std::optional<LibraryVersion> version{};  ///< nullopt: not available here
    std::string path{};                       ///< the file it was opened from; empty when not
    std::string not_available{};  ///< why not (what was searched); empty when available
    /// Whether the library opened (version is set).
    bool available() const noexcept { return version.has_value(); }
};

/// nvFatbin's version, opening it on first call, or why it is not available.
OptionalLibraryVersion nvfatbin_version();
/// libNVVM's version, as nvfatbin_version().
OptionalLibraryVersion nvvm_version();

/// The file NVRTC was loaded from, as the dynamic loader resolved it.
std::string nvrtc_path();
/// The file nvJitLink was loaded from.
std::string nvjitlink_path();

}  // namespace system
}  // namespace cudacore
