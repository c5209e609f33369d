#include "loader/nvml_api.hpp"

#include "cudacore/errors.hpp"
#include "loader/dynamic_library.hpp"

namespace cudacore::detail {

#ifdef CUDACORE_HAVE_NVML
namespace {

NvmlApi load_nvml() {
    NvmlApi api;
    LibrarySearch search{"NVML (libnvidia-ml.so.1, installed with the NVIDIA driver)",
                         "CUDACORE_NVML_PATH", {"libnvidia-ml.so.1"}};
    OpenedLibrary library = open_library(search);
    api.path = library.path;
#define CUDACORE_NVML_FUNCTION(name) \
    require_symbol(library, search, #name, api.name, " (an NVML of driver 525 or newer is needed)");
#include "loader/nvml_functions.inc"
#undef CUDACORE_NVML_FUNCTION
    // Optional: a missing one stays null and its readings report "not supported".
#define CUDACORE_NVML_FUNCTION(name) find_symbol(library, #name, api.name);
#include "loader/nvml_optional_functions.inc"
#undef CUDACORE_NVML_FUNCTION
    // NVML is never shut down: handles stay valid for the life of the process.
    const nvmlReturn_t status = api.nvmlInit_v2();
    if (status != NVML_SUCCESS) {
        const char* text = api.nvmlErrorString(status);
        throw NvmlError("nvmlInit_v2", static_cast<int>(status), text ? text : "NVML error",
                        library.path);
    }
    return api;
}

}  // namespace

const NvmlApi& nvml() {
    static const auto* loaded = new LoadedApi<NvmlApi>(load_nvml);  // leaked: valid at exit
    return loaded->get();
}

void check_nvml(nvmlReturn_t status, const char* call, const std::string& object) {
    if (status == NVML_SUCCESS) return;
    const char* text = nvml().nvmlErrorString(status);
    throw NvmlError(call, static_cast<int>(status), text ? text : "NVML error", object);
}
#endif

}  // namespace cudacore::detail
