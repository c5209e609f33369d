#include "loader/compiler_apis.hpp"

#include "loader/compiler_calls_at_exit.hpp"
#include "loader/dynamic_library.hpp"
#include "loader/signal_imports.hpp"

#include <cuda.h>
#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <string>

namespace cudacore::detail {

namespace {

// Why a required symbol may be missing: a toolkit older than the headers we were built with.
std::string toolkit_needed() {
    return "; a CUDA " + std::to_string(CUDA_VERSION / 1000) + " toolkit is needed";
}

// NVRTC opens libnvrtc-builtins.so.MAJOR.MINOR by its bare name while compiling, so from a
// folder that is not on the loader's search path (NVIDIA's nvidia-cuda-nvrtc wheel, a copy
// shipped beside the application) every compile would fail. When NVRTC was opened by a path,
// the builtins beside it are opened first: NVRTC's own dlopen then finds them loaded, by soname.
// A failure is left for NVRTC to report, as it would without this.
void preload_nvrtc_builtins(const std::string& nvrtc_path, int major, int minor) {
    const std::size_t slash = nvrtc_path.rfind('/');
    if (slash == std::string::npos) return;  // found by the loader, which finds the builtins too
    const std::string builtins = nvrtc_path.substr(0, slash + 1) + "libnvrtc-builtins.so." +
                                 std::to_string(major) + "." + std::to_string(minor);
    if (::access(builtins.c_str(), F_OK) == 0) ::dlopen(builtins.c_str(), RTLD_NOW | RTLD_GLOBAL);
}

NvrtcApi load_nvrtc() {
    // Opening NVRTC runs its initialisation, which an exit must not run its destructors under:
    // the exit waits for this as for a compile (compiler_calls_at_exit.hpp).
    const CompilerCall opening("dlopen(libnvrtc)");
    NvrtcApi api;
    const LibrarySearch search = nvrtc_search();
    OpenedLibrary library = open_library(search);
    api.path = library.path;
    const std::string need = toolkit_needed();
#define CUDACORE_NVRTC_FUNCTION(name) require_symbol(library, search, #name, api.name, need);
#include "loader/nvrtc_functions.inc"
#undef CUDACORE_NVRTC_FUNCTION
#define CUDACORE_NVRTC_OPTIONAL_FUNCTION(name) find_symbol(library, #name, api.name);
#include "loader/nvrtc_optional_functions.inc"
#undef CUDACORE_NVRTC_OPTIONAL_FUNCTION
    // NVRTC would put handlers of its own for SIGINT and SIGTERM in the program's place while
    // compiling (see signal_imports.hpp): it keeps the program's instead, before any compile.
    keep_signal_dispositions(reinterpret_cast<const void*>(api.nvrtcCompileProgram));
    api.nvrtcVersion(&api.major, &api.minor);
    preload_nvrtc_builtins(library.path, api.major, api.minor);
    // Registered after NVRTC's exit-time destructors, so that it runs before them.
    wait_for_compiler_calls_at_exit();
    return api;
}

NvJitLinkApi load_nvjitlink() {
    NvJitLinkApi api;
    const LibrarySearch search = nvjitlink_search();
    OpenedLibrary library = open_library(search);
    api.path = library.path;
    const std::string need = toolkit_needed();
    auto get = [&](const char* symbol, auto& slot) {
        require_symbol(library, search, symbol, slot, need);
    };
    get("__nvJitLinkCreate_13_0", api.create);
    get("__nvJitLinkDestroy_13_0", api.destroy);
    get("__nvJitLinkAddData_13_0", api.add_data);
    get("__nvJitLinkComplete_13_0", api.complete);
    get("__nvJitLinkGetLinkedCubinSize_13_0", api.get_linked_cubin_size);
    get("__nvJitLinkGetLinkedCubin_13_0", api.get_linked_cubin);
    get("__nvJitLinkGetLinkedPtxSize_13_0", api.get_linked_ptx_size);
    get("__nvJitLinkGetLinkedPtx_13_0", api.get_linked_ptx);
    get("__nvJitLinkGetErrorLogSize_13_0", api.get_error_log_size);
    get("__nvJitLinkGetErrorLog_13_0", api.get_error_log);
    get("__nvJitLinkGetInfoLogSize_13_0", api.get_info_log_size);
    get("__nvJitLinkGetInfoLog_13_0", api.get_info_log);
    get("nvJitLinkVersion", api.version);
    api.version(&api.major, &api.minor);
    return api;
}

}  // namespace

LibrarySearch nvrtc_search() {
    return {"NVRTC (libnvrtc.so.13)", "CUDACORE_NVRTC_PATH",
            compiler_library_candidates({"libnvrtc.so.13", "libnvrtc.so"})};
}

LibrarySearch nvjitlink_search() {
    return {"nvJitLink (libnvJitLink.so.13)", "CUDACORE_NVJITLINK_PATH",
            compiler_library_candidates({"libnvJitLink.so.13", "libnvJitLink.so"})};
}

namespace {
std::atomic<const NvrtcApi*> opened_nvrtc{nullptr};
std::atomic<const NvJitLinkApi*> opened_nvjitlink{nullptr};
}  // namespace

const NvrtcApi& nvrtc() {
    static const auto* loaded = new LoadedApi<NvrtcApi>(load_nvrtc);  // leaked: valid at exit
    const NvrtcApi& api = loaded->get();
    opened_nvrtc.store(&api, std::memory_order_release);
    return api;
}

const NvrtcApi* nvrtc_if_opened() noexcept { return opened_nvrtc.load(std::memory_order_acquire); }

const NvJitLinkApi& nvjitlink() {
    static const auto* loaded = new LoadedApi<NvJitLinkApi>(load_nvjitlink);  // leaked
    const NvJitLinkApi& api = loaded->get();
    opened_nvjitlink.store(&api, std::memory_order_release);
    return api;
}

const NvJitLinkApi* nvjitlink_if_opened() noexcept { return opened_nvjitlink.load(std::memory_order_acquire); }

bool nvjitlink_available() noexcept {
    try {
        nvjitlink();
        return true;
    } catch (...) {
        return false;
    }
}

std::string nvjitlink_status_name(nvJitLinkResult status) {
    switch (status) {
        case NVJITLINK_SUCCESS: return "NVJITLINK_SUCCESS";
        case NVJITLINK_ERROR_UNRECOGNIZED_OPTION: return "NVJITLINK_ERROR_UNRECOGNIZED_OPTION";
        case NVJITLINK_ERROR_MISSING_ARCH: return "NVJITLINK_ERROR_MISSING_ARCH";
        case NVJITLINK_ERROR_INVALID_INPUT: return "NVJITLINK_ERROR_INVALID_INPUT";
        case NVJITLINK_ERROR_PTX_COMPILE: return "NVJITLINK_ERROR_PTX_COMPILE";
        case NVJITLINK_ERROR_NVVM_COMPILE: return "NVJITLINK_ERROR_NVVM_COMPILE";
        case NVJITLINK_ERROR_INTERNAL: return "NVJITLINK_ERROR_INTERNAL";
        case NVJITLINK_ERROR_THREADPOOL: return "NVJITLINK_ERROR_THREADPOOL";
        case NVJITLINK_ERROR_UNRECOGNIZED_INPUT: return "NVJITLINK_ERROR_UNRECOGNIZED_INPUT";
        case NVJITLINK_ERROR_FINALIZE: return "NVJITLINK_ERROR_FINALIZE";
        case NVJITLINK_ERROR_NULL_INPUT: return "NVJITLINK_ERROR_NULL_INPUT";
        case NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS: return "NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS";
        case NVJITLINK_ERROR_INCORRECT_INPUT_TYPE: return "NVJITLINK_ERROR_INCORRECT_INPUT_TYPE";
        case NVJITLINK_ERROR_ARCH_MISMATCH: return "NVJITLINK_ERROR_ARCH_MISMATCH";
        case NVJITLINK_ERROR_OUTDATED_LIBRARY: return "NVJITLINK_ERROR_OUTDATED_LIBRARY";
        case NVJITLINK_ERROR_MISSING_FATBIN: return "NVJITLINK_ERROR_MISSING_FATBIN";
        case NVJITLINK_ERROR_UNRECOGNIZED_ARCH: return "NVJITLINK_ERROR_UNRECOGNIZED_ARCH";
        case NVJITLINK_ERROR_UNSUPPORTED_ARCH: return "NVJITLINK_ERROR_UNSUPPORTED_ARCH";
        case NVJITLINK_ERROR_LTO_NOT_ENABLED: return "NVJITLINK_ERROR_LTO_NOT_ENABLED";
        default: return "nvJitLinkResult " + std::to_string(static_cast<int>(status));
    }
}

}  // namespace cudacore::detail
