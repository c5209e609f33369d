// libNVVM, opened at run time on first use, like NVRTC: CUDACORE_NVVM_PATH when set (the only
// path tried), else libnvvm.so.4 by soname, then the toolkit's nvvm/lib64 ($CUDA_HOME, the
// toolkit found at build time, /usr/local/cuda), then the libNVVM found at build time (the
// `nvidia-nvvm` Python package's, on machines without a full toolkit). Once and thread-safely;
// a failure is a LoaderError naming every path tried, thrown again on every later call.
//
// cudacore is built against nvvm.h when the build finds one (CUDACORE_HAVE_NVVM); without it
// every NVVM entry point throws LoaderError saying so.
#pragma once

#include <string>

#ifdef CUDACORE_HAVE_NVVM
#include <nvvm.h>
#endif

namespace cudacore::detail {

#ifdef CUDACORE_HAVE_NVVM
struct NvvmApi {
#define CUDACORE_NVVM_FUNCTION(name) decltype(&::name) name = nullptr;
#include "loader/nvvm_functions.inc"
#undef CUDACORE_NVVM_FUNCTION
    std::string path;
    int major = 0, minor = 0;        // libNVVM's version
    int ir_major = 0, ir_minor = 0;  // the NVVM IR version it reads
};

const NvvmApi& nvvm();

// Throws CompilerApiError naming the call, the status and the object when status is not success.
void check_nvvm(nvvmResult status, const char* call, const std::string& object);
#endif

// "major.minor" of the libNVVM that loads, or throws LoaderError (also when built without nvvm.h).
std::string nvvm_version();
// The path (or soname) libNVVM was opened from; throws as nvvm_version().
std::string nvvm_path();

// libdevice (libdevice.10.bc) beside the libNVVM that loaded: CUDACORE_LIBDEVICE_PATH when set,
// else nvvm/libdevice/ next to the library's folder (toolkit and Python-package layouts). Throws
// LoaderError naming the paths tried when none exists.
std::string libdevice_path();

}  // namespace cudacore::detail
