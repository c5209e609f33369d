// Stream::begin_capture (cudacore/stream.hpp), defined beside the graph builder it makes.
#include "cudacore/graph_builder.hpp"
#include "cudacore/stream.hpp"

namespace cudacore {

GraphBuilder Stream::begin_capture() const { return begin_capture(CaptureMode::relaxed); }

GraphBuilder Stream::begin_capture(CaptureMode mode) const {
    check_usable("Stream::begin_capture");
    GraphBuilder builder(*this);
    builder.begin(mode);
    return builder;
}

}  // namespace cudacore
