// The box behind Buffer: the address, its size, the resource that frees it and the stream it is
// freed on. Shared by every copy of a Buffer; released (memory freed, errors ignored) when the
// last copy goes.
#pragma once

#include "cudacore/memory_resource.hpp"
#include "runtime/runtime_handles.hpp"

#include <cuda.h>

#include <memory>

namespace cudacore::detail {

struct BufferBox {
    CUdeviceptr handle = 0;  // 0 once closed
    std::size_t size = 0;
    std::shared_ptr<MemoryResource> resource;  // null for from_handle without a resource
    std::shared_ptr<StreamBox> free_stream;    // the stream it is freed on when the box goes
    int device_ordinal = 0;
    bool device_accessible = false;
    bool host_accessible = false;
    bool owned = true;  // false for Buffer::from_handle

    BufferBox() = default;
    BufferBox(const BufferBox&) = delete;
    BufferBox& operator=(const BufferBox&) = delete;
    ~BufferBox();

    // Frees the memory through its resource on `stream` (owned memory only) and marks the box
    // closed, even when freeing throws.
    void release(CUstream stream);
};

// The legacy, per-thread and null streams mean "the current context's default stream": the
// driver needs a current context for them, and only for them (explicit streams carry theirs).
inline bool is_default_stream(CUstream stream) noexcept {
    return stream == nullptr || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD;
}

}  // namespace cudacore::detail
