// The checks and arithmetic of an array copy (array_copy.cpp), apart from the driver: testable
// without a GPU.
#pragma once

#include "cudacore/array_copy.hpp"

#include <cstddef>
#include <string>

namespace cudacore::detail {

// A region resolved against its array, in elements (extents never 0).
struct ResolvedRegion {
    std::size_t x = 0, y = 0, z = 0;
    std::size_t width = 0, height = 0, depth = 0;
};

// `region` with its zero extents run to the end of `array`'s extents; InvalidArgumentError naming
// `call` and `side` ("destination region") when it does not lie inside the array.
ResolvedRegion resolve_region(const char* call, const char* side, const ArrayOptions& options,
                              ArrayShape shape, const ArrayRegion& region,
                              const std::string& array_description);

// The element size copies of `options` use; InvalidArgumentError naming `call` for formats
// without one (block-compressed, video).
std::size_t copy_element_size(const char* call, const ArrayOptions& options,
                              const std::string& array_description);

// How a resolved region lies in linear memory: pitch and rows resolved, and `span`, the bytes
// from the start of the memory to the last byte copied.
struct LinearPlan {
    std::size_t offset = 0;
    std::size_t pitch = 0;
    std::size_t rows = 0;
    std::size_t span = 0;
};

// InvalidArgumentError naming `call` when the pitch or rows are too small for the region, or the
// memory (`linear_bytes` long, described by `linear_description`) too short for the span.
LinearPlan plan_linear(const char* call, const ResolvedRegion& region, std::size_t element_size,
                       const LinearLayout& layout, std::size_t linear_bytes,
                       const std::string& linear_description);

// Whether the copy needs cuMemcpy3DAsync (arrays with slices, layers or faces).
inline bool needs_3d_copy(ArrayShape shape) noexcept {
    return shape != ArrayShape::one_d && shape != ArrayShape::two_d;
}

}  // namespace cudacore::detail
