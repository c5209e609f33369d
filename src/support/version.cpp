#include "cudacore/version.hpp"

namespace cudacore {
const char* version() noexcept { return CUDACORE_VERSION_STRING; }
}  // namespace cudacore
