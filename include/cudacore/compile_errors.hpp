/// @file
/// The errors of compiling and linking, each with the full log: a compiler library's call
/// failing (CompilerApiError), a program that does not compile (CompileError), a failed link
/// (LinkError).
#pragma once

#include "cudacore/errors.hpp"

#include <nvrtc.h>

#include <string>
#include <vector>

namespace cudacore {

/// NVRTC or nvJitLink failed outside of compiling or linking proper (bad option, out of memory).
class CompilerApiError : public Error {
public:
    /// Makes the error from the call, its status (number and name) and the object involved.
    CompilerApiError(std::string call, int status, std::string status_name, std::string object);
    /// The call that failed (NVRTC, nvJitLink, NVVM, or a system call).
    const std::string& call() const noexcept { return call_; }
    /// Its status number (the library's result code, or errno).
    int status() const noexcept { return status_; }
    const std::string& status_name() const noexcept { return status_name_; }  ///< the status's name

private:
    std::string call_;
    int status_;
    std::string status_name_;
};

/// Compiling a program failed.
class CompileError : public Error {
public:
    /// Makes the error; `nvrtc_status` is NVRTC_SUCCESS where another compiler failed.
    CompileError(std::string program_name, std::string log, std::vector<std::string> options,
                 std::string backend, nvrtcResult nvrtc_status = NVRTC_SUCCESS);
    /// The program's name (ProgramOptions::name).
    const std::string& program_name() const noexcept { return program_name_; }
    /// The compiler's full log; what() quotes its first error line and any "cudacore hint: "
    /// lines, which name the option that cures an error cudacore knows.
    const std::string& log() const noexcept { return log_; }
    /// The options the compiler was given.
    const std::vector<std::string>& options() const noexcept { return options_; }
    /// nvrtcCompileProgram's status; NVRTC_SUCCESS when nvJitLink or libNVVM failed.
    nvrtcResult nvrtc_status() const noexcept { return nvrtc_status_; }

private:
    std::string program_name_;
    std::string log_;
    std::vector<std::string> options_;
    nvrtcResult nvrtc_status_ = NVRTC_SUCCESS;
};

/// Linking failed.
class LinkError : public Error {
public:
    /// Makes the error; `failed_call` names the linker call that failed and its status.
    LinkError(std::string name, std::string log, std::vector<std::string> options,
              std::string backend, std::string failed_call = {});
    /// The link's name (LinkerOptions::name).
    const std::string& name() const noexcept { return name_; }
    /// The linker's full log; what() quotes only its first error line.
    const std::string& log() const noexcept { return log_; }
    /// The options the linker was given.
    const std::vector<std::string>& options() const noexcept { return options_; }

private:
    std::string name_;
    std::string log_;
    std::vector<std::string> options_;
};

}  // namespace cudacore
