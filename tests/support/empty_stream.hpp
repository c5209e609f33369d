// A Stream with no driver stream behind it, made through the internal box (no driver needed):
// enough for resources that ignore the stream, and for checks that refuse an empty one.
// fake_stream: a Stream whose handle is `handle` and that nothing ever destroys or calls the
// driver with (for resources that only record the stream they are given).
#pragma once

#include "cudacore/stream.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"

#include <cstdint>
#include <memory>

namespace cudacore::test {

inline Stream no_stream() {
    return detail::BoxAccess::empty<Stream>();
}

inline Stream fake_stream(std::uintptr_t handle) {
    auto box = std::make_shared<detail::StreamBox>();
    box->handle = reinterpret_cast<CUstream>(handle);
    box->owned = false;
    return detail::BoxAccess::make<Stream>(std::move(box));
}

}  // namespace cudacore::test
