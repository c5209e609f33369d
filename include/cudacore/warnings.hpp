/// @file
/// Warnings: what went wrong where no exception can be thrown, or where cudacore chose a safe
/// fallback, reported to a handler the program installs (none by default: cudacore never prints).
#pragma once

#include <functional>
#include <string>

namespace cudacore {

/// What a Warning is about.
enum class WarningKind {
    /// A destructor (or close) could not release a driver resource (it may be leaked).
    release_failed,
    /// compile_cached did not store a compile whose key could not cover what it read.
    not_cached,
    /// A compile ran without automatic PCH. Once per process and folder.
    pch_off,
    /// A RemoteProgramCache could not use its server; compiles go on. Once per cause.
    remote_cache_failed,
    /// A DiskProgramCache repaired its damaged bookkeeping, or went on without that part.
    disk_cache_repaired,
    /// A RemoteProgramCache's secret file is readable by others (chmod 600 it).
    secret_file_exposed,
    /// The standard headers' folder cannot be had. Once per process and reason.
    standard_headers_off,
};

/// "release_failed", "not_cached", ...; "WarningKind(N)" outside the enumeration.
std::string to_string(WarningKind kind);

/// A warning cudacore reports through the warning handler.
struct Warning {
    WarningKind kind{};     ///< what it is about
    std::string message{};  ///< what happened, naming the call, the status and the object
};

/// What receives warnings; called from any thread, it must not throw.
using WarningHandler = std::function<void(const Warning&)>;

/// Installs `handler` (empty: the silent default) and returns the previous one. Any thread.
WarningHandler set_warning_handler(WarningHandler handler);

/// Reports a warning to the installed handler; never throws.
void warn(WarningKind kind, const std::string& message) noexcept;

}  // namespace cudacore
