#include "code/cuda_home.hpp"

#include "support/watched_environment.hpp"

namespace cudacore::detail {

const std::string* cuda_home_value() {
    static const WatchedVariable variable("CUDA_HOME");
    return variable.value();
}

}  // namespace cudacore::detail
