#include "cudacore/widget.hpp"

namespace cudacore {

int Widget::weight() const { return 2; }

}  // namespace cudacore
