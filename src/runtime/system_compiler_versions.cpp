// system::nvrtc_version / nvjitlink_version: the versions the loader read when it opened them,
// and the files it opened.
#include "cudacore/system.hpp"

#include "cudacore/compile_errors.hpp"
#include "cudacore/errors.hpp"
#include "loader/compiler_apis.hpp"
#include "loader/nvfatbin_api.hpp"
#include "loader/nvvm_api.hpp"

#include <dlfcn.h>

#include <cstdio>

namespace cudacore::system {

LibraryVersion nvrtc_version() {
    const detail::NvrtcApi& api = detail::nvrtc();
    return {api.major, api.minor};
}

LibraryVersion nvjitlink_version() {
    const detail::NvJitLinkApi& api = detail::nvjitlink();
    return {static_cast<int>(api.major), static_cast<int>(api.minor)};
}

namespace {

// The file holding `symbol`: a library opened by its soname is named by the path the dynamic
// loader found; `fallback` (the name it was opened by) when the loader gives no absolute path.
std::string file_of(const void* symbol, const std::string& fallback) {
    Dl_info info{};
    if (dladdr(symbol, &info) && info.dli_fname && info.dli_fname[0] == '/') return info.dli_fname;
    return fallback;
}

}  // namespace

std::string nvrtc_path() {
    const detail::NvrtcApi& api = detail::nvrtc();
    return file_of(reinterpret_cast<const void*>(api.nvrtcVersion), api.path);
}

std::string nvjitlink_path() {
    const detail::NvJitLinkApi& api = detail::nvjitlink();
    return file_of(reinterpret_cast<const void*>(api.create), api.path);
}

namespace {

// A library opened on demand: "major.minor" and the file from the loader's calls, or why not.
OptionalLibraryVersion optional_library(std::string (*version)(), std::string (*path)()) {
    OptionalLibraryVersion out;
    try {
        const std::string text = version();
        LibraryVersion parsed;
        if (std::sscanf(text.c_str(), "%d.%d", &parsed.major, &parsed.minor) != 2) {
            out.not_available = "it reported the version '" + text + "', which is not major.minor";
            return out;
        }
        out.path = path();
        out.version = parsed;
    } catch (const LoaderError& e) {
        out.not_available = e.what();
    } catch (const CompilerApiError& e) {
        out.not_available = e.what();
    }
    return out;
}

}  // namespace

OptionalLibraryVersion nvfatbin_version() {
    return optional_library(&detail::nvfatbin_version, &detail::nvfatbin_path);
}

OptionalLibraryVersion nvvm_version() {
    return optional_library(&detail::nvvm_version, &detail::nvvm_path);
}

}  // namespace cudacore::system
