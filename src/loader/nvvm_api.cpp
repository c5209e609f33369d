#include "loader/nvvm_api.hpp"

#include "cudacore/compile_errors.hpp"
#include "cudacore/errors.hpp"
#include "loader/dynamic_library.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

namespace cudacore::detail {

namespace {

const char* const kLibrary = "libNVVM (libnvvm.so.4)";
const char* const kEnvVar = "CUDACORE_NVVM_PATH";

#ifdef CUDACORE_HAVE_NVVM
std::vector<std::string> nvvm_candidates() {
    std::vector<std::string> candidates{"libnvvm.so.4"};
    for (const auto& root : toolkit_roots())
        candidates.push_back(root + "/nvvm/lib64/libnvvm.so.4");
#ifdef CUDACORE_DEFAULT_NVVM_LIBRARY
    candidates.emplace_back(CUDACORE_DEFAULT_NVVM_LIBRARY);
#endif
    return candidates;
}

NvvmApi load_nvvm() {
    NvvmApi api;
    LibrarySearch search{kLibrary, kEnvVar, nvvm_candidates()};
    OpenedLibrary library = open_library(search);
    api.path = library.path;
#define CUDACORE_NVVM_FUNCTION(name) require_symbol(library, search, #name, api.name);
#include "loader/nvvm_functions.inc"
#undef CUDACORE_NVVM_FUNCTION
    // A soname hit leaves a bare name; the real path locates libdevice beside it.
    if (Dl_info info{}; dladdr(reinterpret_cast<void*>(api.nvvmVersion), &info) &&
                        info.dli_fname && info.dli_fname[0] == '/') {
        api.path = info.dli_fname;
    }
    api.nvvmVersion(&api.major, &api.minor);
    int debug_major = 0, debug_minor = 0;
    api.nvvmIRVersion(&api.ir_major, &api.ir_minor, &debug_major, &debug_minor);
    return api;
}
#endif

}  // namespace

#ifdef CUDACORE_HAVE_NVVM
const NvvmApi& nvvm() {
    static const auto* loaded = new LoadedApi<NvvmApi>(load_nvvm);  // leaked: valid at exit
    return loaded->get();
}

void check_nvvm(nvvmResult status, const char* call, const std::string& object) {
    if (status == NVVM_SUCCESS) return;
    const char* name = nvvm().nvvmGetErrorString(status);
    throw CompilerApiError(call, static_cast<int>(status), name ? name : "NVVM error", object);
}
#endif

std::string nvvm_version() {
#ifdef CUDACORE_HAVE_NVVM
    const auto& api = nvvm();
    return std::to_string(api.major) + "." + std::to_string(api.minor);
#else
    throw LoaderError(kLibrary, {}, kEnvVar,
                      "cudacore was built without nvvm.h, so NVVM IR programs are unavailable; "
                      "rebuild with the toolkit's nvvm/include or the nvidia-nvvm package");
#endif
}

std::string nvvm_path() {
#ifdef CUDACORE_HAVE_NVVM
    return nvvm().path;
#else
    nvvm_version();  // throws the LoaderError that explains the missing header
    return {};
#endif
}

std::string libdevice_path() {
    namespace fs = std::filesystem;
    std::vector<std::string> tried;
    if (const char* forced = std::getenv("CUDACORE_LIBDEVICE_PATH"); forced && *forced) {
        if (fs::is_regular_file(forced)) return forced;
        throw LoaderError("libdevice (libdevice.10.bc)", {forced}, "CUDACORE_LIBDEVICE_PATH",
                          "the path in CUDACORE_LIBDEVICE_PATH is not a file");
    }
#ifdef CUDACORE_HAVE_NVVM
    // The loaded library's real folder: <toolkit>/nvvm/lib64 or <package>/lib.
    std::error_code error;
    fs::path library = fs::canonical(nvvm().path, error);
    if (error) library = nvvm().path;
    const fs::path parent = library.parent_path().parent_path();
    for (const fs::path& candidate : {parent / "libdevice" / "libdevice.10.bc",
                                      parent / "nvvm" / "libdevice" / "libdevice.10.bc"}) {
        tried.push_back(candidate.string());
        if (fs::is_regular_file(candidate)) return candidate.string();
    }
#endif
    throw LoaderError("libdevice (libdevice.10.bc)", tried, "CUDACORE_LIBDEVICE_PATH",
                      "not found beside libNVVM");
}

}  // namespace cudacore::detail
