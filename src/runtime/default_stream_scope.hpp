// A call on a default stream (CU_STREAM_LEGACY, CU_STREAM_PER_THREAD or null), which the driver
// reads as the calling thread's current context's, runs with the stream's own context current:
// pushed for the call when another context, or none, is current, and popped after it. So a Stream
// always means the same driver stream (no rebinding), and Context::default_stream() need not
// change the calling thread's current context. For any other stream it is one comparison.
#pragma once

#include "cudacore/stream.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"

#include <optional>

namespace cudacore::detail {

class DefaultStreamScope {
public:
    explicit DefaultStreamScope(const StreamBox& stream) {
        if (is_default_stream(stream.handle)) [[unlikely]]
            enter(stream);
    }
    // A closed or empty Stream does nothing here: the call's own check refuses it.
    explicit DefaultStreamScope(const Stream& stream) {
        if (is_default_stream(stream.handle())) [[unlikely]]
            if (const auto& box = box_of(stream)) enter(*box);
    }
    DefaultStreamScope(const DefaultStreamScope&) = delete;
    DefaultStreamScope& operator=(const DefaultStreamScope&) = delete;

private:
    void enter(const StreamBox& stream) {
        if (stream.context) scope_.emplace(*stream.context);
    }
    std::optional<ContextScope> scope_;
};

}  // namespace cudacore::detail
