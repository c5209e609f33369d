// Over 200 lines: the whole exception hierarchy is one concept, a few lines per class.
/// @file
/// The one exception hierarchy of cudacore.
///
/// Every message names the call that failed, the status by name and text where there is one, and
/// the object involved (kernel name, code type, size, arch...). Catch `cudacore::Error` for all of
/// them, or a derived class for one kind of failure.
#pragma once

#include <cuda.h>
#include <nvrtc.h>

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
    /// Makes the error from the library, the paths searched, the variable that overrides them and
    /// why the last one failed; what() says all of it.
    LoaderError(std::string library, std::vector<std::string> searched, std::string env_var,
                std::string reason);
    /// The library that could not be loaded ("libnvrtc.so", for instance).
    const std::string& library() const noexcept { return library_; }
    /// The paths or names tried, in order (may be empty).
    const std::vector<std::string>& searched() const noexcept { return searched_; }
    /// The environment variable that points at the library's full path (may be empty).
    const std::string& env_var() const noexcept { return env_var_; }
    /// Why loading failed (the loader's message, a missing symbol...).
    const std::string& reason() const noexcept { return reason_; }

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
    /// Makes the error from the status, the call that returned it and the object involved; what()
    /// names all three with the status's name and text.
    DriverError(CUresult status, std::string call, std::string object);
    /// Makes the error as above, with the lines the driver logged for the failed call (CUDA 12.9
    /// and later); what() ends with "; driver log: LINE | LINE" when there are any.
    DriverError(CUresult status, std::string call, std::string object,
                std::vector<std::string> driver_log);
    /// The status the call returned.
    CUresult status() const noexcept { return status_; }
    /// Its name ("CUDA_ERROR_OUT_OF_MEMORY"), as driver_status_name().
    const std::string& status_name() const noexcept { return status_name_; }
    /// Its text, as driver_status_text().
    const std::string& status_text() const noexcept { return status_text_; }
    /// The driver call that failed ("cuMemAlloc").
    const std::string& call() const noexcept { return call_; }
    /// The object involved (kernel, buffer, stream...), as described in what(); may be empty.
    const std::string& object() const noexcept { return object_; }
    /// What the driver logged about this failure on the calling thread, oldest line first, as
    /// quoted in what(): for instance which limit a launch exceeded or which argument was
    /// invalid. Empty when the driver logged nothing, or has no error log (before CUDA 12.9).
    const std::vector<std::string>& driver_log() const noexcept { return driver_log_; }

private:
    CUresult status_;
    std::string status_name_;
    std::string status_text_;
    std::string call_;
    std::string object_;
    std::vector<std::string> driver_log_;
};

/// NVRTC or nvJitLink failed outside of compiling or linking proper (bad option, out of memory).
class CompilerApiError : public Error {
public:
    /// Makes the error from the call, its status (number and name) and the object involved.
    CompilerApiError(std::string call, int status, std::string status_name, std::string object);
    /// The call that failed (an NVRTC, nvJitLink or NVVM function, or a system call).
    const std::string& call() const noexcept { return call_; }
    /// Its status number (the library's result code; errno where a system call failed).
    int status() const noexcept { return status_; }
    /// The status's name.
    const std::string& status_name() const noexcept { return status_name_; }

private:
    std::string call_;
    int status_;
    std::string status_name_;
};

/// Compiling a program failed. Carries the full compiler log, the program name and the options.
class CompileError : public Error {
public:
    /// Makes the error from the program's name, the compiler's log, the options used and NVRTC's
    /// status (NVRTC_SUCCESS where another compiler failed).
    CompileError(std::string program_name, std::string log, std::vector<std::string> options,
                 std::string backend, nvrtcResult nvrtc_status = NVRTC_SUCCESS);
    /// The program's name (ProgramOptions::name).
    const std::string& program_name() const noexcept { return program_name_; }
    /// The compiler's full log; what() quotes only its first error line.
    const std::string& log() const noexcept { return log_; }
    /// The options the compiler was given.
    const std::vector<std::string>& options() const noexcept { return options_; }
    /// nvrtcCompileProgram's status (NVRTC_ERROR_COMPILATION, NVRTC_ERROR_INVALID_OPTION,
    /// NVRTC_ERROR_CANCELLED...); NVRTC_SUCCESS when nvJitLink or libNVVM failed (a PTX or NVVM IR
    /// program). Never throws.
    nvrtcResult nvrtc_status() const noexcept { return nvrtc_status_; }

private:
    std::string program_name_;
    std::string log_;
    std::vector<std::string> options_;
    nvrtcResult nvrtc_status_ = NVRTC_SUCCESS;
};

/// Linking failed. Carries the full linker log, the link's name and the options.
class LinkError : public Error {
public:
    /// `failed_call`: the linker call that failed and its status (for example
    /// "cuLinkAddData(ptx 'k', 80 bytes) failed: CUDA_ERROR_INVALID_PTX"), named in what().
    LinkError(std::string name, std::string log, std::vector<std::string> options,
              std::string backend, std::string failed_call = {});
    /// The link's name (LinkerOptions::name).
    const std::string& name() const noexcept { return name_; }
    /// The linker's full log; what() quotes only its first error line.
    const std::string& log() const noexcept { return log_; }
    /// The options the linker was given (nvJitLink flags, or the driver linker's options
    /// described).
    const std::vector<std::string>& options() const noexcept { return options_; }

private:
    std::string name_;
    std::string log_;
    std::vector<std::string> options_;
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

/// A function enqueued with Stream::launch_host_func threw. Raised by the next call on that
/// stream (see stream.hpp); original() is the exception it threw.
class HostFunctionError : public Error {
public:
    /// Makes the error from its message and the exception the host function threw.
    HostFunctionError(const std::string& message, std::exception_ptr original)
        : Error(message), original_(std::move(original)) {}
    /// The exception the host function threw (rethrow it with std::rethrow_exception).
    const std::exception_ptr& original() const noexcept { return original_; }

private:
    std::exception_ptr original_;
};

/// Name and text of a driver status, without needing the driver (falls back to the number).
std::string driver_status_name(CUresult status);
/// The driver's description of `status` (cuGetErrorString) when the driver is loaded, else
/// "no description (the driver is not loaded)". Never throws beyond std::bad_alloc.
std::string driver_status_text(CUresult status);

/// An NVML call failed (system information: utilisation, temperature, power, clocks). Carries
/// the call, NVML's status number and text, and the device involved.
class NvmlError : public Error {
public:
    /// Makes the error from the NVML call, its status (number and text) and the device involved.
    NvmlError(std::string call, int status, std::string status_text, std::string object);
    /// The NVML call that failed.
    const std::string& call() const noexcept { return call_; }
    /// Its status number (an nvmlReturn_t value).
    int status() const noexcept { return status_; }
    /// The status's text (nvmlErrorString).
    const std::string& status_text() const noexcept { return status_text_; }

private:
    std::string call_;
    int status_;
    std::string status_text_;
};

/// First line of a compiler or linker log that reports an error (or the first non-empty line).
std::string first_error_line(const std::string& log);

}  // namespace cudacore
