// NVML (libnvidia-ml.so.1, installed with the driver), opened and initialised at run time on
// first use, once and thread-safely: CUDACORE_NVML_PATH when set, else the soname. A failure is
// a LoaderError (or a SystemInfoError when nvmlInit fails), thrown again on every later call; the
// rest of cudacore does not need NVML and keeps working.
#pragma once

#include <string>

#ifdef CUDACORE_HAVE_NVML
#include <nvml.h>
#endif

namespace cudacore::detail {

#ifdef CUDACORE_HAVE_NVML
struct NvmlApi {
#define CUDACORE_NVML_FUNCTION(name) decltype(&::name) name = nullptr;
#include "loader/nvml_functions.inc"
#include "loader/nvml_optional_functions.inc"
#undef CUDACORE_NVML_FUNCTION
    std::string path;
};

// Loaded and initialised (nvmlInit_v2 succeeded).
const NvmlApi& nvml();

// A reading this GPU or driver cannot give (not an error of the query).
inline bool nvml_not_supported(nvmlReturn_t status) {
    return status == NVML_ERROR_NOT_SUPPORTED || status == NVML_ERROR_FUNCTION_NOT_FOUND ||
           status == NVML_ERROR_NO_PERMISSION;
}

// Throws SystemInfoError naming the call, NVML's status text and the object.
void check_nvml(nvmlReturn_t status, const char* call, const std::string& object);
#endif

}  // namespace cudacore::detail
