#include "loader/nvml_api.hpp"

#include "cudacore/errors.hpp"
#include "loader/dynamic_library.hpp"

#include <exception>

namespace cudacore::detail {

#ifdef CUDACORE_HAVE_NVML
namespace {

struct LoadedNvml {
    NvmlApi api;
    std::exception_ptr failure;
};

LoadedNvml load_nvml() {
    LoadedNvml out;
    try {
        const char* library_name = "NVML (libnvidia-ml.so.1, installed with the NVIDIA driver)";
        LibrarySearch search{library_name, "CUDACORE_NVML_PATH", {"libnvidia-ml.so.1"}};
        OpenedLibrary library = open_library(search);
        out.api.path = library.path;
#define CUDACORE_NVML_FUNCTION(name)                                                           \
    out.api.name = reinterpret_cast<decltype(out.api.name)>(find_symbol(library, #name));     \
    if (!out.api.name) {                                                                       \
        throw LoaderError(library_name, {library.path}, "CUDACORE_NVML_PATH",                  \
                          "symbol " #name " is missing (an NVML of driver 525 or newer is needed)"); \
    }
#include "loader/nvml_functions.inc"
#undef CUDACORE_NVML_FUNCTION
        // Optional: a missing one stays null and its readings report "not supported".
#define CUDACORE_NVML_FUNCTION(name) \
    out.api.name = reinterpret_cast<decltype(out.api.name)>(find_symbol(library, #name));
#include "loader/nvml_optional_functions.inc"
#undef CUDACORE_NVML_FUNCTION
        // NVML is never shut down: handles stay valid for the life of the process.
        const nvmlReturn_t status = out.api.nvmlInit_v2();
        if (status != NVML_SUCCESS) {
            const char* text = out.api.nvmlErrorString(status);
            throw NvmlError("nvmlInit_v2", static_cast<int>(status), text ? text : "NVML error",
                            library.path);
        }
    } catch (...) {
        out.failure = std::current_exception();
    }
    return out;
}

}  // namespace

const NvmlApi& nvml() {
    static const auto* loaded = new LoadedNvml(load_nvml());  // leaked: valid at exit
    if (loaded->failure) std::rethrow_exception(loaded->failure);
    return loaded->api;
}

void check_nvml(nvmlReturn_t status, const char* call, const std::string& object) {
    if (status == NVML_SUCCESS) return;
    const char* text = nvml().nvmlErrorString(status);
    throw NvmlError(call, static_cast<int>(status), text ? text : "NVML error", object);
}
#endif

}  // namespace cudacore::detail
