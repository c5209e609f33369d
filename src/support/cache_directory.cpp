#include "support/cache_directory.hpp"

#include <cstdlib>
#include <optional>
#include <string_view>

namespace cudacore::detail {

CacheDirectory cache_directory_from_environment() noexcept {
    try {
        auto absolute_variable = [](const char* name) -> std::optional<std::filesystem::path> {
            const char* value = std::getenv(name);
            if (value == nullptr || *value == '\0' || value[0] != '/') return std::nullopt;
            return std::filesystem::path(value);
        };
        if (const char* dir = std::getenv("CUDACORE_CACHE_DIR"); dir != nullptr && *dir != '\0') {
            // Relative paths are refused like relative XDG_CACHE_HOME / HOME values: the cache
            // would move with the working directory, and could land in a folder others control.
            if (dir[0] != '/')
                return {{}, std::string("CUDACORE_CACHE_DIR='") + dir +
                                "' is a relative path; set it to an absolute path"};
            return {std::filesystem::path(dir), {}};
        }
        if (auto dir = absolute_variable("XDG_CACHE_HOME")) return {*dir / "cudacore", {}};
        if (auto home = absolute_variable("HOME")) return {*home / ".cache" / "cudacore", {}};
        return {{}, "none of CUDACORE_CACHE_DIR, XDG_CACHE_HOME or HOME is set to an absolute path"};
    } catch (...) {  // std::bad_alloc
        return {{}, "out of memory while reading the cache folder from the environment"};
    }
}

bool cache_disabled_in_environment() noexcept {
    const char* value = std::getenv("CUDACORE_DISABLE_CACHE");
    return value != nullptr && *value != '\0' && std::string_view(value) != "0";
}

}  // namespace cudacore::detail
