// Buffer's identity (declared in cudacore/buffer.hpp, listed in cudacore/identity.hpp).
#include "cudacore/buffer.hpp"

#include <ostream>

namespace cudacore {

std::string to_string(const Buffer& buffer) { return buffer.description(); }

std::ostream& operator<<(std::ostream& out, const Buffer& buffer) { return out << to_string(buffer); }

}  // namespace cudacore
