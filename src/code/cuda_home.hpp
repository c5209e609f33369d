// $CUDA_HOME, which chooses the toolkit's include folders: read at every call that depends on it
// (a Program sees a changed toolkit), cheaply (support/watched_environment.hpp).
#pragma once

#include <string>

namespace cudacore::detail {

// The value of $CUDA_HOME now, or nullptr when unset; equal values are the same pointer for the
// life of the process. Thread-safe; throws std::bad_alloc only after the environment changed.
const std::string* cuda_home_value();

}  // namespace cudacore::detail
