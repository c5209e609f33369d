/// @file
/// StridedMemoryView: a typed, strided view of memory over a Buffer it holds (cuda.core's
/// StridedMemoryView), from a Buffer and a layout or from a DLPack tensor; row-major, strides
/// in elements. As an mdspan: mdspan.hpp. Guide: docs/memory.md.
///
///     StridedMemoryView view = StridedMemoryView::from_buffer(
///         buffer, {.shape = {rows, cols}, .dtype = {kDLFloat, 32, 1}});
///     TensorMap map = view.as_tensor_map({16, 32});           // box in the view's order
///     launch(stream, config, kernel, map, view);              // a view is passed as its data()
#pragma once

#include "cudacore/buffer.hpp"
#include "cudacore/dlpack.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/tensor_map.hpp"

#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace cudacore {

/// What as_tensor_map takes besides the view: everything per dimension in the view's order.
struct ViewTensorMapOptions {
    std::vector<std::uint32_t> box{};            ///< elements per dimension of one tile
    std::vector<std::uint32_t> element_strides{};  ///< 1..8 per dimension; empty: all 1
    std::optional<TensorDataType> element_type{};  ///< empty: from the view's dtype
    TensorMapInterleave interleave = TensorMapInterleave::none;      ///< as TensorMapOptions
    TensorMapSwizzle swizzle = TensorMapSwizzle::none;               ///< as TensorMapOptions
    TensorMapL2Promotion l2_promotion = TensorMapL2Promotion::none;  ///< as TensorMapOptions
    TensorMapOobFill oob_fill = TensorMapOobFill::zero;              ///< as TensorMapOptions
};

/// A typed, strided view of memory. Closed with its Buffer: then data() is null and calls that
/// need the memory throw InvalidArgumentError. Copies share it; thread-safe to read.
class StridedMemoryView {
public:
    /// An empty view (closed; no dimensions).
    StridedMemoryView() = default;

    /// A view of `buffer` with `layout`. InvalidArgumentError when it does not fit.
    static StridedMemoryView from_buffer(const Buffer& buffer, const DLPackLayout& layout,
                                         bool read_only = false);
    /// Consumes `tensor` (from_dlpack's rules: its deleter runs when the last copy goes).
    static StridedMemoryView from_dlpack(DLManagedTensor* tensor);

    /// The first element (null once closed).
    void* data() const noexcept {
        return is_closed() ? nullptr : static_cast<char*>(buffer_.data()) + layout_.byte_offset;
    }
    /// Number of dimensions.
    int ndim() const noexcept { return static_cast<int>(layout_.shape.size()); }
    /// Extent of each dimension, outermost first.
    const std::vector<std::int64_t>& shape() const noexcept { return layout_.shape; }
    /// Stride of each dimension, in elements (always ndim() values).
    const std::vector<std::int64_t>& strides() const noexcept { return layout_.strides; }
    /// The element type (DLPack's code, bits and lanes).
    const DLDataType& dtype() const noexcept { return layout_.dtype; }
    /// Bytes per element: bits x lanes, rounded up to whole bytes.
    std::size_t element_bytes() const noexcept {
        return (std::size_t{layout_.dtype.bits} * layout_.dtype.lanes + 7) / 8;
    }
    /// Elements in the view (the product of the shape).
    std::size_t size() const noexcept;
    /// The strides are the compact row-major ones (dimensions of extent 1 are not compared).
    bool is_c_contiguous() const noexcept;
    /// Made read-only: as_mdspan then gives only const elements (nothing else checks it).
    bool is_read_only() const noexcept { return read_only_; }
    /// The memory's device, -1 for host memory or memory bound to no device.
    int device_ordinal() const;
    /// The buffer's is_device_accessible().
    bool is_device_accessible() const;
    /// The buffer's is_host_accessible().
    bool is_host_accessible() const;
    /// DLPack's device of the memory (kDLCUDA, kDLCUDAHost, kDLCUDAManaged or kDLCPU).
    DLDevice dl_device() const;
    /// The buffer viewed (held by the view).
    const Buffer& buffer() const noexcept { return buffer_; }
    /// The layout relative to buffer(): shape, strides (filled in), dtype, byte_offset.
    const DLPackLayout& layout() const noexcept { return layout_; }
    /// The buffer was closed (or the view is default-constructed).
    bool is_closed() const noexcept { return buffer_.is_closed(); }

    /// A DLPack tensor of the view, holding the buffer until its deleter is called.
    DLManagedTensor* to_dlpack() const;

    /// A tiled TensorMap of the view, holding the memory. Throws as TensorMap::tiled.
    TensorMap as_tensor_map(const ViewTensorMapOptions& options) const;
    /// as_tensor_map with only a box (view's order) and default options.
    TensorMap as_tensor_map(std::vector<std::uint32_t> box) const {
        ViewTensorMapOptions options;
        options.box = std::move(box);
        return as_tensor_map(options);
    }

    /// data(), or InvalidArgumentError naming `operation` when closed.
    void* checked_data(const char* operation) const;

private:
    Buffer buffer_;
    DLPackLayout layout_;
    bool read_only_ = false;
};

/// The TensorDataType of a DLPack element type, or empty when TMA has none.
std::optional<TensorDataType> tensor_data_type(const DLDataType& dtype) noexcept;

/// launch() passes a view as its data pointer.
template <class T>
    requires std::is_same_v<T, StridedMemoryView>
struct KernelArgument<T> {
    /// The view's data(); InvalidArgumentError when it is closed.
    static void* convert(const T& view) { return view.checked_data("launch"); }
};

}  // namespace cudacore
