#include "code/cuda_home.hpp"

#include "support/watched_environment.hpp"

namespace cudacore::detail {

const std::string* cuda_home_value() {
    // Leaked on purpose: usable from static destructors (a compile at exit).
    static const auto* variable = new WatchedVariable("CUDA_HOME");
    return variable->value();
}

}  // namespace cudacore::detail
