// NVRTC and nvJitLink, opened at run time on first use (where: compiler_library_candidates),
// once and thread-safely. CUDACORE_NVRTC_PATH / CUDACORE_NVJITLINK_PATH force
// a path. Failures throw LoaderError, and the same error again on every later call.
#pragma once

#include "loader/dynamic_library.hpp"

#include <nvJitLink.h>
#include <nvrtc.h>

#include <string>

namespace cudacore::detail {

struct NvrtcApi {
#define CUDACORE_NVRTC_FUNCTION(name) decltype(&::name) name = nullptr;
#include "loader/nvrtc_functions.inc"
#undef CUDACORE_NVRTC_FUNCTION
    // Null where this NVRTC lacks them.
#define CUDACORE_NVRTC_OPTIONAL_FUNCTION(name) decltype(&::name) name = nullptr;
#include "loader/nvrtc_optional_functions.inc"
#undef CUDACORE_NVRTC_OPTIONAL_FUNCTION
    std::string path;
    int major = 0, minor = 0;
};

// nvJitLink's header maps each name to a versioned symbol (__nvJitLinkCreate_13_0); we take the
// versioned symbols so the ABI matches the header we were built with.
struct NvJitLinkApi {
    decltype(&__nvJitLinkCreate_13_0) create = nullptr;
    decltype(&__nvJitLinkDestroy_13_0) destroy = nullptr;
    decltype(&__nvJitLinkAddData_13_0) add_data = nullptr;
    decltype(&__nvJitLinkComplete_13_0) complete = nullptr;
    decltype(&__nvJitLinkGetLinkedCubinSize_13_0) get_linked_cubin_size = nullptr;
    decltype(&__nvJitLinkGetLinkedCubin_13_0) get_linked_cubin = nullptr;
    decltype(&__nvJitLinkGetLinkedPtxSize_13_0) get_linked_ptx_size = nullptr;
    decltype(&__nvJitLinkGetLinkedPtx_13_0) get_linked_ptx = nullptr;
    decltype(&__nvJitLinkGetErrorLogSize_13_0) get_error_log_size = nullptr;
    decltype(&__nvJitLinkGetErrorLog_13_0) get_error_log = nullptr;
    decltype(&__nvJitLinkGetInfoLogSize_13_0) get_info_log_size = nullptr;
    decltype(&__nvJitLinkGetInfoLog_13_0) get_info_log = nullptr;
    decltype(&::nvJitLinkVersion) version = nullptr;
    std::string path;
    unsigned major = 0, minor = 0;
};

// Where each is looked for, and the variable that forces a path.
LibrarySearch nvrtc_search();
LibrarySearch nvjitlink_search();

const NvrtcApi& nvrtc();
// NVRTC where this process has opened it already, else nullptr (opens nothing). Never throws.
const NvrtcApi* nvrtc_if_opened() noexcept;
const NvJitLinkApi& nvjitlink();
// nvJitLink where this process has opened it already, else nullptr (opens nothing). Never throws.
const NvJitLinkApi* nvjitlink_if_opened() noexcept;
bool nvjitlink_available() noexcept;

// nvJitLink's name for `status` (NVJITLINK_ERROR_PTX_COMPILE...).
std::string nvjitlink_status_name(nvJitLinkResult status);

}  // namespace cudacore::detail
