// Opening shared libraries at run time: one search order, one error format for every library.
#pragma once

#include <string>
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

// Opens the first candidate that loads (the env var alone when it is set). Throws LoaderError
// naming every path tried, the dlerror of each, and the variable to set. Never dlclose'd: the
// library stays for the life of the process, so handles released at exit still find it.
OpenedLibrary open_library(const LibrarySearch& search);

// The symbol, or nullptr.
void* find_symbol(const OpenedLibrary& library, const char* name);

// $CUDA_HOME (or the toolkit found at build time, then /usr/local/cuda) joined with lib64/name.
std::vector<std::string> toolkit_library_candidates(const std::vector<std::string>& sonames);

// Where an application ships NVRTC or nvJitLink, in order (docs/deployment.md): beside the
// executable (its folder, then ../lib), then the NVIDIA wheels' lib folder (nvidia/cu13/lib) in
// the Python environment $CUDACORE_PYTHON_PREFIX names (a prefix, a virtual environment or a
// site-packages folder), then toolkit_library_candidates(). The folders are searched for the
// first (versioned) soname.
std::vector<std::string> compiler_library_candidates(const std::vector<std::string>& sonames);

}  // namespace cudacore::detail
