// The boxes behind CudaArray and MipmappedArray: the raw handle, what it depends on, and the
// streams of the work cudacore enqueued that uses it (copies, launches through a texture or a
// surface), which are waited for before the handle is destroyed (runtime/release/release.hpp: release_after_uses).
#pragma once

#include "cudacore/cuda_array.hpp"
#include "runtime/release/release.hpp"
#include "runtime/runtime_handles.hpp"

#include <cuda.h>

#include <memory>

namespace cudacore::detail {

struct MipmappedArrayBox {
    CUmipmappedArray handle = nullptr;
    std::shared_ptr<ContextBox> context;
    ArrayOptions options;  // level 0, channels resolved
    ArrayShape shape = ArrayShape::one_d;
    unsigned levels = 0;
    int ordinal = 0;
    LaunchStreams uses;
    MipmappedArrayBox() {}
    ~MipmappedArrayBox();
    MipmappedArrayBox(const MipmappedArrayBox&) = delete;
    MipmappedArrayBox& operator=(const MipmappedArrayBox&) = delete;
};

struct ArrayBox {
    CUarray handle = nullptr;
    std::shared_ptr<ContextBox> context;
    // A level view: the mipmapped array that owns `handle` (never destroyed through this box).
    std::shared_ptr<MipmappedArrayBox> parent;
    // A view of an array another object owns (a mapped graphics resource): held like `parent`,
    // never destroyed through this box.
    std::shared_ptr<void> owner;
    int level = -1;
    ArrayOptions options;  // channels resolved
    ArrayShape shape = ArrayShape::one_d;
    std::size_t element_size = 0;
    int ordinal = 0;
    LaunchStreams uses;
    ArrayBox() {}
    ~ArrayBox();
    ArrayBox(const ArrayBox&) = delete;
    ArrayBox& operator=(const ArrayBox&) = delete;
};

// "2D CUDA array float32x4 64 x 32 (surface load/store)" for `options` of `shape`.
std::string describe_array(const ArrayOptions& options, ArrayShape shape);

}  // namespace cudacore::detail
