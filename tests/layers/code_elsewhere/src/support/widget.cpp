#include "cudacore/widget.hpp"

namespace cudacore {

int Widget::size() const { return 1; }

}  // namespace cudacore
