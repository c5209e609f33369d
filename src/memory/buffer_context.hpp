// BufferContext: makes a buffer's context current for driver calls that name no context but
// fail with CUDA_ERROR_INVALID_CONTEXT without one (cuMemAdvise, cuMemRangeGetAttribute,
// cuTensorMapEncode*).
#pragma once

#include "cudacore/buffer.hpp"
#include "cudacore/errors.hpp"
#include "loader/driver_api.hpp"
#include "runtime/runtime_handles.hpp"

#include <memory>
#include <optional>

namespace cudacore::detail {

// The primary context of the buffer's device is made current while this lives (memory bound to
// no device keeps the current context, else device 0's primary context).
class BufferContext {
public:
    explicit BufferContext(const Buffer& buffer) {
        int ordinal = buffer.device_ordinal();
        if (ordinal < 0) {
            CUcontext current = nullptr;
            check(driver().cuCtxGetCurrent(&current), "cuCtxGetCurrent",
                          [&] { return buffer.description(); });
            if (current) return;
            ordinal = 0;
        }
        context_ = primary_context(ordinal);
        scope_.emplace(*context_);
    }

private:
    std::shared_ptr<ContextBox> context_;  // declared first: outlives the scope
    std::optional<ContextScope> scope_;
};

}  // namespace cudacore::detail
