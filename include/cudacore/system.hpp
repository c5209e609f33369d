/// @file
/// Process-wide facts about the CUDA driver and devices.
#pragma once

#include <compare>
#include <optional>
#include <string>
#include <vector>

namespace cudacore {

class Device;

namespace system {

/// Whether a usable CUDA driver is present. Never throws; loads the driver on first call.
bool driver_available() noexcept;

/// The driver's CUDA version as an integer (13000 for 13.0). Throws NoDriverError without one.
int driver_version();

/// The path the driver was opened from. Throws NoDriverError without one.
std::string driver_path();

/// Number of CUDA devices (asked of the driver once per process: it does not change). Throws
/// NoDriverError when no driver is present.
int device_count();

/// Every device, by ordinal. Throws NoDriverError when no driver is present.
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

/// The version of the NVRTC cudacore opened (nvrtcVersion), loading it on first call. Needs no
/// GPU. Throws LoaderError (what was searched, CUDACORE_NVRTC_PATH) when NVRTC cannot be loaded.
LibraryVersion nvrtc_version();
/// The version of the nvJitLink cudacore opened (nvJitLinkVersion), loading it on first call.
/// Needs no GPU. Throws LoaderError (CUDACORE_NVJITLINK_PATH) when it cannot be loaded.
LibraryVersion nvjitlink_version();

/// A library cudacore opens only when a feature needs it and does without otherwise (nvFatbin,
/// libNVVM): its version and file when it opens, else why not.
struct OptionalLibraryVersion {
    std::optional<LibraryVersion> version{};  ///< nullopt: not available here
    std::string path{};                       ///< the file it was opened from; empty when not
    /// Why it is not available (what was searched, the variable that points at it, or that
    /// cudacore was built without its header); empty when it is.
    std::string not_available{};
    /// Whether the library opened (version is set).
    bool available() const noexcept { return version.has_value(); }
};

/// nvFatbin's version (nvFatbinVersion), opening it on first call (CUDACORE_NVFATBIN_PATH, the
/// toolkit, the copy found at build time), or not available, saying why. Never throws beyond
/// std::bad_alloc; needs no GPU. Thread-safe.
OptionalLibraryVersion nvfatbin_version();
/// libNVVM's version (nvvmVersion), as nvfatbin_version() says (CUDACORE_NVVM_PATH).
OptionalLibraryVersion nvvm_version();

/// The file NVRTC was loaded from, as the dynamic loader resolved it (an absolute path also when
/// it was found by its soname; the name tried when the loader gives no path). Loads NVRTC on first
/// call; needs no GPU. Throws LoaderError as nvrtc_version(). Thread-safe.
std::string nvrtc_path();
/// The file nvJitLink was loaded from, as nvrtc_path() says; throws LoaderError as
/// nvjitlink_version(). Thread-safe.
std::string nvjitlink_path();

}  // namespace system
}  // namespace cudacore
