/// @file
/// Warnings: what went wrong where no exception can be thrown, or where cudacore chose a safe
/// fallback, reported to a handler the program installs (by default none: cudacore never prints).
/// Release failures from driver shutdown or a device reset are not reported. set_warning_handler
/// may be called from any thread; the handler may be called from any thread and must not throw.
#pragma once

#include <functional>
#include <string>

namespace cudacore {

/// What a Warning is about.
enum class WarningKind {
    /// A destructor (or close) could not release a driver resource: the call, status and object
    /// are in the message. The resource may be leaked.
    release_failed,
    /// compile_cached compiled the program but did not store it, because the key could not cover
    /// what the compile read (the message says why).
    not_cached,
    /// A compile ran without NVRTC's automatic precompiled headers because the folder they go to
    /// cannot hold one now (a missing or relative TMPDIR, a nearly full file system, a file size
    /// limit), or because a header bundle's folder (HeaderBundle::folder()) cannot be had, so its
    /// headers were read from memory; the message names the folder and the reason. Once per
    /// process and folder (and bundle).
    pch_off,
    /// A RemoteProgramCache could not use its server (unreachable, timed out, credentials
    /// refused, out of memory...): compiles go on without it. Once per cause until the server
    /// works again; the message names the server and the cause.
    remote_cache_failed,
    /// A DiskProgramCache found its own bookkeeping damaged (a shard folder replaced by a file or
    /// a symbolic link, a counters file that is not a regular file) and repaired it, or could not
    /// and went on without that part; the message names the path and what was done.
    disk_cache_repaired,
    /// A RemoteProgramCache's secret file (RemoteCacheOptions::secret_file) gives users other
    /// than its owner access (its mode has group or other bits, as ssh refuses for a key): the
    /// message names the file, its mode and the option. The secret is used all the same; chmod
    /// 600 the file. Once each time a cache reads it.
    secret_file_exposed,
    /// The folder of cudacore's standard headers (ProgramOptions::std_headers) cannot be had (no
    /// cache folder, a read-only file system): C++ compiles go on without them, so an
    /// \#include \<type_traits\> fails. The message names the folder and the reason. Once per
    /// process and reason.
    standard_headers_off,
};

/// "release_failed", "not_cached", "pch_off", "remote_cache_failed", "disk_cache_repaired",
/// "secret_file_exposed", "standard_headers_off"; "WarningKind(N)" for a value outside the
/// enumeration. Never throws beyond std::bad_alloc.
std::string to_string(WarningKind kind);

/// A warning cudacore reports through the warning handler.
struct Warning {
    WarningKind kind{};     ///< what it is about
    std::string message{};  ///< what happened, naming the call, the status and the object
};

/// What receives warnings (set_warning_handler); it must not throw.
using WarningHandler = std::function<void(const Warning&)>;

/// Installs `handler` (an empty function restores the silent default) and returns the previous one.
WarningHandler set_warning_handler(WarningHandler handler);

/// Reports a warning to the installed handler; never throws.
void warn(WarningKind kind, const std::string& message) noexcept;

}  // namespace cudacore
