// nvFatbin (libnvfatbin.so.13), opened at run time on first use, like nvJitLink:
// CUDACORE_NVFATBIN_PATH when set (the only path tried), else beside the executable, the NVIDIA
// wheels of $CUDACORE_PYTHON_PREFIX, the soname, the toolkit's lib64 ($CUDA_HOME, the toolkit
// found at build time, /usr/local/cuda), then the library found at build time (the
// `nvidia-nvfatbin` Python package's, on machines whose toolkit lacks it). Once and
// thread-safely; a failure is a LoaderError naming every path tried, thrown again on every later
// call.
//
// cudacore is built against nvFatbin.h when the build finds one (CUDACORE_HAVE_NVFATBIN); without
// it every nvFatbin entry point throws LoaderError saying so.
#pragma once

#include <string>

#ifdef CUDACORE_HAVE_NVFATBIN
#include <nvFatbin.h>
#endif

namespace cudacore::detail {

#ifdef CUDACORE_HAVE_NVFATBIN
struct NvFatbinApi {
#define CUDACORE_NVFATBIN_FUNCTION(name) decltype(&::name) name = nullptr;
#include "loader/nvfatbin_functions.inc"
#undef CUDACORE_NVFATBIN_FUNCTION
    std::string path;
    unsigned major = 0, minor = 0;
};

const NvFatbinApi& nvfatbin();

// Throws CompilerApiError naming the call, the status (nvFatbinGetErrorString's text) and the
// object when status is not success.
void check_nvfatbin(nvFatbinResult status, const char* call, const std::string& object);
#endif

// "major.minor" of the nvFatbin that loads, or throws LoaderError (also when built without
// nvFatbin.h).
std::string nvfatbin_version();
// The path (or soname) nvFatbin was opened from; throws as nvfatbin_version().
std::string nvfatbin_path();

}  // namespace cudacore::detail
