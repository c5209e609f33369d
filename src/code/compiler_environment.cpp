#include "code/compiler_environment.hpp"

#include <cstdlib>

namespace cudacore::detail {

const std::string& nvrtc_environment_in_keys() {
    static const std::string environment = [] {
        std::string out;
        for (const std::string_view name : nvrtc_keyed_variables)
            if (const char* value = std::getenv(std::string(name).c_str()))
                out.append(name).append("=").append(value).append("\n");
        return out;
    }();
    return environment;
}

}  // namespace cudacore::detail
