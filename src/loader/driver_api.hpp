// The CUDA driver, opened at run time (nothing links libcuda) and its entry points taken through
// cuGetProcAddress for the CUDA version of the headers cudacore was built with.
#pragma once

#include <cuda.h>

#include <string>

namespace cudacore::detail {

struct DriverApi {
#define CUDACORE_DRIVER_FUNCTION(name) decltype(&::name) name = nullptr;
#include "loader/driver_functions.inc"
#undef CUDACORE_DRIVER_FUNCTION
    std::string path;         // the library that was opened
    int driver_version = 0;   // cuDriverGetVersion
};

// Opens and initialises the driver once, thread-safely (cuInit included). Throws NoDriverError
// when it is missing or too old; the same error again on every later call.
const DriverApi& driver();

// The driver if it has already been opened successfully, else nullptr. Never throws or loads.
const DriverApi* driver_if_loaded() noexcept;

// Whether a usable driver is present (loads it on first call). Never throws.
bool driver_available() noexcept;

// Throws DriverError when status is not CUDA_SUCCESS.
inline void check(CUresult status, const char* call, const std::string& object = {});
[[noreturn]] void throw_driver_error(CUresult status, const char* call, const std::string& object);

inline void check(CUresult status, const char* call, const std::string& object) {
    if (status != CUDA_SUCCESS) [[unlikely]]
        throw_driver_error(status, call, object);
}

}  // namespace cudacore::detail
