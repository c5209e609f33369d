/// @file
/// The one exception hierarchy of cudacore: catch `cudacore::Error` for all, or a derived class
/// for one kind of failure. Every message names the call that failed, the status by name and text
/// where there is one, and the object involved. Compiling and linking errors: compile_errors.hpp.
#pragma once

#include <cuda.h>

#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

namespace cudacore {

/// Base of every exception cudacore throws.
class Error : public std::runtime_error {
public:
    /// Makes the error with its message (what()).
    explicit Error(const std::string& message) : std::runtime_error(message) {}
};

/// A caller passed something unusable (empty source, zero size, a closed buffer...).
class InvalidArgumentError : public Error {
public:
    /// Makes the error with its message (what()).
    using Error::Error;
};

/// A shared library (driver, NVRTC, nvJitLink) could not be opened or lacks a symbol.
class LoaderError : public Error {
public:
    /// Makes the error from the library, the paths searched, the override variable and reason.
    LoaderError(std::string library, std::vector<std::string> searched, std::string env_var,
                std::string reason);
    /// The library that could not be loaded ("libnvrtc.so").
    const std::string& library() const noexcept { return library_; }
    /// The paths or names tried, in order.
    const std::vector<std::string>& searched() const noexcept { return searched_; }
    /// The environment variable that overrides the library's path (may be empty).
    const std::string& env_var() const noexcept { return env_var_; }
    const std::string& reason() const noexcept { return reason_; }  ///< why loading failed

private:
    std::string library_;
    std::vector<std::string> searched_;
    std::string env_var_;
    std::string reason_;
};

/// The CUDA driver (libcuda.so.1) is not present, or is too old for this build.
class NoDriverError : public LoaderError {
public:
    /// Made as a LoaderError.
    using LoaderError::LoaderError;
};

/// A CUDA driver call returned an error.
class DriverError : public Error {
public:
    /// Makes the error from the status, the call that returned it and the object involved.
    DriverError(CUresult status, std::string call, std::string object);
    /// The same, with the lines the driver logged for the call (CUDA 12.9+), quoted in what().
    DriverError(CUresult status, std::string call, std::string object,
                std::vector<std::string> driver_log);
    CUresult status() const noexcept { return status_; }  ///< the status the call returned
    /// Its name ("CUDA_ERROR_OUT_OF_MEMORY").
    const std::string& status_name() const noexcept { return status_name_; }
    const std::string& status_text() const noexcept { return status_text_; }  ///< its text
    /// The driver call that failed ("cuMemAlloc").
    const std::string& call() const noexcept { return call_; }
    /// The object involved (kernel, buffer, stream...); may be empty.
    const std::string& object() const noexcept { return object_; }
    /// What the driver logged about this failure, oldest first (empty before CUDA 12.9).
    const std::vector<std::string>& driver_log() const noexcept { return driver_log_; }

private:
    CUresult status_;
    std::string status_name_;
    std::string status_text_;
    std::string call_;
    std::string object_;
    std::vector<std::string> driver_log_;
};

/// Serialized data is malformed: truncated, corrupted, oversized or from a future format.
class SerializationError : public Error {
public:
    /// Makes the error with its message (what()).
    using Error::Error;
};

/// The program cache could not be used (unsafe directory, I/O failure).
class CacheError : public Error {
public:
    /// Makes the error with its message (what()).
    using Error::Error;
};

/// A function enqueued with Stream::launch_host_func threw; raised by the next call on that stream.
class HostFunctionError : public Error {
public:
    /// Makes the error from its message and the exception the host function threw.
    HostFunctionError(const std::string& message, std::exception_ptr original)
        : Error(message), original_(std::move(original)) {}
    /// The exception the host function threw.
    const std::exception_ptr& original() const noexcept { return original_; }

private:
    std::exception_ptr original_;
};

/// The name of a driver status, without needing the driver (falls back to the number).
std::string driver_status_name(CUresult status);
/// The driver's description of `status`, or "no description (the driver is not loaded)".
std::string driver_status_text(CUresult status);

/// An NVML call failed (system information: utilisation, temperature, power, clocks).
class NvmlError : public Error {
public:
    /// Makes the error from the NVML call, its status and text, and the device involved.
    NvmlError(std::string call, int status, std::string status_text, std::string object);
    const std::string& call() const noexcept { return call_; }  ///< the NVML call that failed
    int status() const noexcept { return status_; }  ///< its status number (an nvmlReturn_t value)
    /// The status's text (nvmlErrorString).
    const std::string& status_text() const noexcept { return status_text_; }

private:
    std::string call_;
    int status_;
    std::string status_text_;
};

/// First line of a compiler or linker log that reports an error ("error", "fatal"; else one that
/// only names an ERROR status; else the first non-empty line).
std::string first_error_line(const std::string& log);

}  // namespace cudacore
