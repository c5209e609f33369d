#include "loader/dynamic_library.hpp"

#include "cudacore/errors.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace cudacore::detail {

OpenedLibrary open_library(const LibrarySearch& search) {
    std::vector<std::string> tried;
    std::string reasons;
    auto attempt = [&](const std::string& path) -> void* {
        tried.push_back(path);
        void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            const char* why = dlerror();
            if (!reasons.empty()) reasons += "; ";
            reasons += why ? why : (path + ": not found");
        }
        return handle;
    };

    const char* forced = std::getenv(search.env_var.c_str());
    for (const auto& candidate : paths_to_try(search)) {
        if (void* handle = attempt(candidate)) return {handle, candidate};
    }
    if (forced && *forced)
        throw LoaderError(search.library, tried, search.env_var,
                          "the path in " + search.env_var + " does not load (" + reasons + ")");
    throw LoaderError(search.library, tried, search.env_var, "not found (" + reasons + ")");
}

std::vector<std::string> paths_to_try(const LibrarySearch& search) {
    if (const char* forced = std::getenv(search.env_var.c_str()); forced && *forced) return {forced};
    return search.candidates;
}

void* find_symbol(const OpenedLibrary& library, const char* name) {
    return dlsym(library.handle, name);
}

void throw_missing_symbol(const OpenedLibrary& library, const LibrarySearch& search,
                          const char* name, std::string_view need) {
    throw LoaderError(search.library, {library.path}, search.env_var,
                      std::string("symbol ") + name + " is missing" + std::string(need));
}

std::vector<std::string> toolkit_roots() {
    std::vector<std::string> roots;
    if (const char* home = std::getenv("CUDA_HOME"); home && *home) roots.emplace_back(home);
    if (const char* path = std::getenv("CUDA_PATH"); path && *path) roots.emplace_back(path);
#ifdef CUDACORE_DEFAULT_CUDA_HOME
    roots.emplace_back(CUDACORE_DEFAULT_CUDA_HOME);
#endif
    roots.emplace_back("/usr/local/cuda");
    return roots;
}

std::vector<std::string> compiler_library_candidates(const std::vector<std::string>& sonames) {
    namespace fs = std::filesystem;
    const std::string& soname = sonames.front();
    std::vector<std::string> candidates;
    auto add_in = [&](const fs::path& folder) {
        std::string path = (folder / soname).lexically_normal().string();
        for (const auto& c : candidates)
            if (c == path) return;
        candidates.push_back(std::move(path));
    };
    std::error_code error;
    if (const fs::path exe = fs::read_symlink("/proc/self/exe", error); !error) {
        add_in(exe.parent_path());
        add_in(exe.parent_path() / ".." / "lib");
    }
    if (const char* prefix = std::getenv("CUDACORE_PYTHON_PREFIX"); prefix && *prefix) {
        // The wheels put their libraries in <site-packages>/nvidia/cu13/lib (CUDA 13).
        const fs::path root(prefix);
        add_in(root / "nvidia" / "cu13" / "lib");
        for (const char* lib : {"lib", "lib64"}) {
            for (const auto& entry : fs::directory_iterator(root / lib, error)) {
                if (entry.path().filename().string().rfind("python3", 0) == 0)
                    add_in(entry.path() / "site-packages" / "nvidia" / "cu13" / "lib");
            }
        }
    }
    // LD_LIBRARY_PATH's folders and the toolkit's by path, the sonames last (the loader's own
    // search: run paths, its cache, the system's folders): a library found by path is identified
    // by its file without being opened (compiler_identity.hpp).
    if (const char* path = std::getenv("LD_LIBRARY_PATH"); path && *path) {
        const std::string folders = path;
        for (std::size_t start = 0; start <= folders.size();) {
            std::size_t end = folders.find(':', start);
            if (end == std::string::npos) end = folders.size();
            // An empty entry is the working directory, as for the loader.
            add_in(end > start ? fs::path(folders.substr(start, end - start)) : fs::current_path(error));
            start = end + 1;
        }
    }
    for (const auto& root : toolkit_roots()) add_in(fs::path(root) / "lib64");
    for (const auto& name : sonames) candidates.push_back(name);
    return candidates;
}

}  // namespace cudacore::detail
