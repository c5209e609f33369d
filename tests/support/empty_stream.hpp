// A Stream with no driver stream behind it, made through the internal box (no driver needed):
// enough for resources that ignore the stream, and for checks that refuse an empty one.
#pragma once

#include "cudacore/stream.hpp"
#include "support/box_access.hpp"

#include <memory>

namespace cudacore::test {

inline Stream no_stream() {
    return detail::BoxAccess::make<Stream>(std::shared_ptr<detail::StreamBox>{});
}

}  // namespace cudacore::test
