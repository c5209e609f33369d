// driver_status_name and driver_status_text (declared in cudacore/errors.hpp): the names this
// library knows, else what the loaded driver says (cuGetErrorName, cuGetErrorString). The
// loader's, since they ask the driver when it is loaded.
#include "cudacore/errors.hpp"

#include "loader/driver_api.hpp"

#include <string>

namespace cudacore {

std::string driver_status_name(CUresult status) {
    switch (status) {
#define CUDACORE_DRIVER_STATUS(name) \
    case name: return #name;
#include "errors/driver_status_names.inc"
#undef CUDACORE_DRIVER_STATUS
        default: break;
    }
    if (const auto* api = detail::driver_if_loaded()) {
        const char* name = nullptr;
        if (api->cuGetErrorName(status, &name) == CUDA_SUCCESS && name) return name;
    }
    return "CUresult " + std::to_string(static_cast<int>(status));
}

std::string driver_status_text(CUresult status) {
    if (const auto* api = detail::driver_if_loaded()) {
        const char* text = nullptr;
        if (api->cuGetErrorString(status, &text) == CUDA_SUCCESS && text) return text;
    }
    return "no description (the driver is not loaded)";
}

}  // namespace cudacore
