/// @file
/// StridedMemoryView and mdspan: a view as a CCCL cuda::std::mdspan for host code, and a view
/// made from an mdspan over a Buffer's memory. Not in cudacore.hpp (it needs CCCL). An mdspan
/// owns nothing: as_mdspan's is valid while the view lives and is open. Thread-safe.
///
///     StridedMemoryView view = StridedMemoryView::from_buffer(
///         buffer, {.shape = {rows, cols}, .dtype = cudacore::dlpack_dtype<float>()});
///     auto matrix = cudacore::as_mdspan<float, 2>(view);   // matrix(r, c)
///     StridedMemoryView back = cudacore::from_mdspan(buffer, matrix);
#pragma once

#include "cudacore/buffer.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/strided_memory_view.hpp"

#include <cuda/std/mdspan>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace cudacore {

/// The DLPack element type of the arithmetic type T (not bool), one lane.
template <class T>
constexpr DLDataType dlpack_dtype() noexcept {
    using U = std::remove_cv_t<T>;
    static_assert(std::is_arithmetic_v<U> && !std::is_same_v<U, bool>,
                  "dlpack_dtype: T must be an arithmetic type other than bool");
    const auto bits = static_cast<std::uint8_t>(sizeof(U) * 8);
    if constexpr (std::is_floating_point_v<U>) return DLDataType{kDLFloat, bits, 1};
    else if constexpr (std::is_signed_v<U>) return DLDataType{kDLInt, bits, 1};
    else return DLDataType{kDLUInt, bits, 1};
}

/// An mdspan of Rank dimensions of T with explicit strides (in elements).
template <class T, std::size_t Rank>
using strided_mdspan =
    cuda::std::mdspan<T, cuda::std::dextents<std::int64_t, Rank>, cuda::std::layout_stride>;

/// `view` as an mdspan of T; InvalidArgumentError for a closed, mismatched or read-only view.
template <class T, std::size_t Rank>
strided_mdspan<T, Rank> as_mdspan(const StridedMemoryView& view) {
    void* data = view.checked_data("as_mdspan");
    const auto fail = [](const std::string& problem) {
        throw InvalidArgumentError("as_mdspan: " + problem);
    };
    if (view.ndim() != static_cast<int>(Rank))
        fail("the view has " + std::to_string(view.ndim()) + " dimension(s), not " +
             std::to_string(Rank));
    const DLDataType wanted = dlpack_dtype<T>();
    const DLDataType dtype = view.dtype();
    if (dtype.code != wanted.code || dtype.bits != wanted.bits || dtype.lanes != wanted.lanes)
        fail("the view's element type (DLPack code " + std::to_string(dtype.code) + ", " +
             std::to_string(dtype.bits) + " bits, " + std::to_string(dtype.lanes) +
             " lane(s)) is not the mdspan's (code " + std::to_string(wanted.code) + ", " +
             std::to_string(wanted.bits) + " bits)");
    if (view.is_read_only() && !std::is_const_v<T>)
        fail("the view is read-only: ask for an mdspan of const elements");
    cuda::std::array<std::int64_t, Rank> extents{};
    cuda::std::array<std::int64_t, Rank> strides{};
    for (std::size_t i = 0; i < Rank; ++i) {
        extents[i] = view.shape()[i];
        strides[i] = view.strides()[i];
    }
    const cuda::std::dextents<std::int64_t, Rank> shape(extents);
    return strided_mdspan<T, Rank>(static_cast<T*>(data),
                                   cuda::std::layout_stride::mapping(shape, strides));
}

/// A view of `span`'s elements inside `buffer`, holding it; InvalidArgumentError if outside.
template <class T, class Extents, class Layout, class Accessor>
StridedMemoryView from_mdspan(const Buffer& buffer,
                              const cuda::std::mdspan<T, Extents, Layout, Accessor>& span) {
    if (buffer.is_closed()) throw InvalidArgumentError("from_mdspan: the buffer is closed");
    const auto* first = reinterpret_cast<const std::byte*>(span.data_handle());
    const auto* start = static_cast<const std::byte*>(buffer.data());
    if (first < start || first >= start + buffer.size())
        throw InvalidArgumentError("from_mdspan: the mdspan's first element is not inside " +
                                   buffer.description());
    DLPackLayout layout;
    layout.dtype = dlpack_dtype<T>();
    layout.byte_offset = static_cast<std::uint64_t>(first - start);
    for (std::size_t i = 0; i < Extents::rank(); ++i) {
        layout.shape.push_back(static_cast<std::int64_t>(span.extent(i)));
        layout.strides.push_back(static_cast<std::int64_t>(span.stride(i)));
    }
    return StridedMemoryView::from_buffer(buffer, layout, std::is_const_v<T>);
}

}  // namespace cudacore
