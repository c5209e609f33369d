// The CUDA driver, opened at run time (nothing links libcuda) and its entry points taken through
// cuGetProcAddress for the CUDA version of the headers cudacore was built with.
#pragma once

#include "errors/driver_log.hpp"

#include <cuda.h>
#include <cudaProfilerTypedefs.h>
#include <cudaTypedefs.h>

#include <atomic>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

// cudaGLTypedefs.h's types of the two OpenGL entry points, written out (GLuint and GLenum are
// unsigned int) so that the driver table needs no GL/gl.h; redeclaring a typedef with the same
// type is allowed, and src/interop/graphics_resource.cpp checks that they match.
typedef CUresult(CUDAAPI* PFN_cuGraphicsGLRegisterBuffer_v3000)(CUgraphicsResource* pCudaResource,
                                                                 unsigned int buffer,
                                                                 unsigned int Flags);
typedef CUresult(CUDAAPI* PFN_cuGraphicsGLRegisterImage_v3000)(CUgraphicsResource* pCudaResource,
                                                                unsigned int image,
                                                                unsigned int target,
                                                                unsigned int Flags);

namespace cudacore::detail {

struct DriverApi {
#define CUDACORE_DRIVER_FUNCTION(name, version) PFN_##name##_v##version name = nullptr;
#include "loader/driver_functions.inc"
#undef CUDACORE_DRIVER_FUNCTION
    // Entry points a usable driver may lack (driver_optional_functions.inc): nullptr then.
#define CUDACORE_DRIVER_OPTIONAL_FUNCTION(name, version) PFN_##name##_v##version name = nullptr;
#include "loader/driver_optional_functions.inc"
#undef CUDACORE_DRIVER_OPTIONAL_FUNCTION
    // Optional entry points, newer than the headers cudacore is built with (so typed here):
    // nullptr when the driver lacks them, and callers fall back.
    CUresult (*cuKernelGetParamCount)(CUkernel kernel, size_t* count) = nullptr;  // CUDA 13.2
    std::string path;         // the library that was opened
    int driver_version = 0;   // cuDriverGetVersion
};

// Set (release) once the driver was opened successfully; read by the inline fast paths below,
// which every driver call of the library goes through.
extern std::atomic<const DriverApi*> loaded_driver;

// Opens and initialises the driver once, thread-safely (cuInit included). Throws NoDriverError
// when it is missing or too old; the same error again on every later call.
const DriverApi& open_driver();
inline const DriverApi& driver() {
    if (const DriverApi* api = loaded_driver.load(std::memory_order_acquire)) [[likely]]
        return *api;
    return open_driver();
}

// The driver if it has already been opened successfully, else nullptr. Never throws or loads.
inline const DriverApi* driver_if_loaded() noexcept {
    return loaded_driver.load(std::memory_order_acquire);
}

// Whether a usable driver is present (loads it on first call). Never throws.
bool driver_available() noexcept;

// Throws DriverError(status, call, object) with the lines the driver logged for the failure on
// this thread (errors/driver_log.hpp), emptying them for the next failure.
[[noreturn]] void throw_driver_error(CUresult status, const char* call, const std::string& object);
// The same with the lines already taken (take_driver_log), for a caller whose description of
// the object may itself call the driver.
[[noreturn]] void throw_driver_error(CUresult status, const char* call, const std::string& object,
                                     std::vector<std::string> driver_log);

// Throws DriverError when status is not CUDA_SUCCESS. On hot paths pass the object as a
// callable returning its description, so the string is only built on failure:
//   check(status, "cuEventRecord", [&] { return describe(box); });
inline void check(CUresult status, const char* call, const char* object = "") {
    if (status != CUDA_SUCCESS) [[unlikely]]
        throw_driver_error(status, call, object);
}
inline void check(CUresult status, const char* call, const std::string& object) {
    if (status != CUDA_SUCCESS) [[unlikely]]
        throw_driver_error(status, call, object);
}
// The description built out of line and cold: inlined, its string code would make every caller
// save and restore registers on its fast path too.
template <typename Describe>
[[noreturn, gnu::noinline, gnu::cold]] void throw_described_driver_error(CUresult status,
                                                                         const char* call,
                                                                         Describe& describe) {
    // The log first: describing the object may call the driver, and must not mix its lines in.
    std::vector<std::string> driver_log = take_driver_log(call);
    throw_driver_error(status, call, describe(), std::move(driver_log));
}
template <typename Describe>
    requires std::is_invocable_r_v<std::string, Describe>
inline void check(CUresult status, const char* call, Describe&& describe) {
    if (status != CUDA_SUCCESS) [[unlikely]]
        throw_described_driver_error(status, call, describe);
}

}  // namespace cudacore::detail
