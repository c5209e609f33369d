#include "loader/nvfatbin_api.hpp"

#include "cudacore/compile_errors.hpp"
#include "cudacore/errors.hpp"
#include "loader/dynamic_library.hpp"

#include <vector>

namespace cudacore::detail {

namespace {

const char* const kNvFatbinLibrary = "nvFatbin (libnvfatbin.so.13)";
const char* const kNvFatbinEnvVar = "CUDACORE_NVFATBIN_PATH";

#ifdef CUDACORE_HAVE_NVFATBIN
std::vector<std::string> nvfatbin_candidates() {
    std::vector<std::string> candidates =
        compiler_library_candidates({"libnvfatbin.so.13", "libnvfatbin.so"});
#ifdef CUDACORE_DEFAULT_NVFATBIN_LIBRARY
    candidates.emplace_back(CUDACORE_DEFAULT_NVFATBIN_LIBRARY);
#endif
    return candidates;
}

NvFatbinApi load_nvfatbin() {
    NvFatbinApi api;
    LibrarySearch search{kNvFatbinLibrary, kNvFatbinEnvVar, nvfatbin_candidates()};
    OpenedLibrary library = open_library(search);
    api.path = library.path;
#define CUDACORE_NVFATBIN_FUNCTION(name) require_symbol(library, search, #name, api.name);
#include "loader/nvfatbin_functions.inc"
#undef CUDACORE_NVFATBIN_FUNCTION
    api.nvFatbinVersion(&api.major, &api.minor);
    return api;
}
#endif

}  // namespace

#ifdef CUDACORE_HAVE_NVFATBIN
const NvFatbinApi& nvfatbin() {
    static const auto* loaded = new LoadedApi<NvFatbinApi>(load_nvfatbin);  // leaked
    return loaded->get();
}

void check_nvfatbin(nvFatbinResult status, const char* call, const std::string& object) {
    if (status == NVFATBIN_SUCCESS) return;
    const char* text = nvfatbin().nvFatbinGetErrorString(status);
    throw CompilerApiError(call, static_cast<int>(status), text ? text : "nvFatbin error", object);
}
#endif

namespace {
#ifndef CUDACORE_HAVE_NVFATBIN
[[noreturn]] void built_without_nvfatbin() {
    throw LoaderError(kNvFatbinLibrary, {}, kNvFatbinEnvVar,
                      "cudacore was built without nvFatbin.h, so fatbins cannot be built; rebuild "
                      "with a toolkit that has it or the nvidia-nvfatbin package");
}
#endif
}  // namespace

std::string nvfatbin_version() {
#ifdef CUDACORE_HAVE_NVFATBIN
    const auto& api = nvfatbin();
    return std::to_string(api.major) + "." + std::to_string(api.minor);
#else
    built_without_nvfatbin();
#endif
}

std::string nvfatbin_path() {
#ifdef CUDACORE_HAVE_NVFATBIN
    return nvfatbin().path;
#else
    built_without_nvfatbin();
#endif
}

}  // namespace cudacore::detail
