// Opening shared libraries at run time: one search order, one error format for every library.
#pragma once

#include <exception>
#include <string>
#include <string_view>
#include <vector>

namespace cudacore::detail {

struct LibrarySearch {
    std::string library;                  // what it is, for messages: "the CUDA driver (libcuda.so.1)"
    std::string env_var;                  // when set, the only path tried
    std::vector<std::string> candidates;  // tried in order: sonames, then full paths
};

struct OpenedLibrary {
    void* handle = nullptr;
    std::string path;  // the candidate that opened
};

// What open_library tries, in order: the path in search.env_var when that is set (alone), else
// search.candidates. Reads the environment now; never throws but std::bad_alloc.
std::vector<std::string> paths_to_try(const LibrarySearch& search);

// Opens the first candidate that loads (the env var alone when it is set). Throws LoaderError
// naming every path tried, the dlerror of each, and the variable to set. Never dlclose'd: the
// library stays for the life of the process, so handles released at exit still find it.
OpenedLibrary open_library(const LibrarySearch& search);

// The symbol, or nullptr.
void* find_symbol(const OpenedLibrary& library, const char* name);

// Sets `slot` (a function pointer) to the symbol, or to nullptr when the library lacks it.
template <typename Function>
void find_symbol(const OpenedLibrary& library, const char* name, Function& slot) {
    slot = reinterpret_cast<Function>(find_symbol(library, name));
}

// Throws LoaderError naming search.library, library.path and search.env_var, with the reason
// "symbol NAME is missing" followed by `need` (what would have it, e.g. "; a CUDA 13 toolkit is
// needed"; may be empty).
[[noreturn]] void throw_missing_symbol(const OpenedLibrary& library, const LibrarySearch& search,
                                       const char* name, std::string_view need);

// As find_symbol, but a missing symbol throws as throw_missing_symbol does.
template <typename Function>
void require_symbol(const OpenedLibrary& library, const LibrarySearch& search, const char* name,
                    Function& slot, std::string_view need = {}) {
    find_symbol(library, name, slot);
    if (!slot) throw_missing_symbol(library, search, name, need);
}

// A library's entry points, loaded by `load` when constructed. A failure is kept and thrown again
// by every get(), so each caller sees the same error. Made once in a function-local static (and
// leaked, so it stays valid while handles are released at exit), it loads once, thread-safely.
template <typename Api>
class LoadedApi {
public:
    explicit LoadedApi(Api (*load)()) noexcept {
        try {
            api_ = load();
        } catch (...) {
            failure_ = std::current_exception();
        }
    }

    // The loaded API; rethrows the failure when loading failed.
    const Api& get() const {
        if (failure_) std::rethrow_exception(failure_);
        return api_;
    }

private:
    Api api_{};
    std::exception_ptr failure_;
};

// The toolkit folders, in the order they are searched: $CUDA_HOME, $CUDA_PATH (each when set),
// the toolkit found at build time, /usr/local/cuda.
std::vector<std::string> toolkit_roots();

// Where NVRTC or nvJitLink is looked for, in order (docs/deployment.md): beside the executable
// (its folder, then ../lib), the NVIDIA wheels' lib folder (nvidia/cu13/lib) in the Python
// environment $CUDACORE_PYTHON_PREFIX names (a prefix, a virtual environment or a site-packages
// folder), each LD_LIBRARY_PATH folder, each toolkit_roots() folder's lib64; the folders for the
// first (versioned) soname. Then each soname, for the loader's own search.
std::vector<std::string> compiler_library_candidates(const std::vector<std::string>& sonames);

}  // namespace cudacore::detail
