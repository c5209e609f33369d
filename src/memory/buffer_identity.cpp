// Buffer's part of cudacore/identity.hpp.
#include "cudacore/identity.hpp"

#include <ostream>

namespace cudacore {

std::string to_string(const Buffer& buffer) { return buffer.description(); }

std::ostream& operator<<(std::ostream& out, const Buffer& buffer) { return out << to_string(buffer); }

}  // namespace cudacore
