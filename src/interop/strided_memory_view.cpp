#include "cudacore/strided_memory_view.hpp"

#include "cudacore/errors.hpp"
#include "views/object_descriptions.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

namespace cudacore {

namespace {

using detail::describe_dtype;

std::string describe_shape(const std::vector<std::int64_t>& values) {
    std::string out = "[";
    for (std::size_t i = 0; i < values.size(); ++i)
        out += (i ? ", " : "") + std::to_string(values[i]);
    return out + "]";
}

// Compact row-major strides (in elements) of `shape`.
std::vector<std::int64_t> row_major(const std::vector<std::int64_t>& shape) {
    std::vector<std::int64_t> strides(shape.size(), 1);
    for (std::size_t i = shape.size(); i-- > 1;)
        strides[i - 1] = strides[i] * std::max<std::int64_t>(shape[i], 1);
    return strides;
}

// The bytes `layout` spans from its first element; throws InvalidArgumentError naming `call`.
std::size_t span_bytes(const DLPackLayout& layout, const char* call) {
    if (!layout.strides.empty() && layout.strides.size() != layout.shape.size())
        throw InvalidArgumentError(std::string(call) + ": " +
                                   std::to_string(layout.strides.size()) + " strides for " +
                                   std::to_string(layout.shape.size()) + " dimensions");
    DLTensor tensor{};
    tensor.ndim = static_cast<std::int32_t>(layout.shape.size());
    tensor.shape = const_cast<std::int64_t*>(layout.shape.data());
    tensor.strides =
        layout.strides.empty() ? nullptr : const_cast<std::int64_t*>(layout.strides.data());
    tensor.dtype = layout.dtype;
    try {
        return dlpack_extent_bytes(tensor);
    } catch (const InvalidArgumentError& e) {
        throw InvalidArgumentError(std::string(call) + ": " + e.what());
    }
}

}  // namespace

std::optional<TensorDataType> tensor_data_type(const DLDataType& dtype) noexcept {
    if (dtype.lanes != 1) return std::nullopt;
    switch (dtype.code) {
        case kDLUInt:
            if (dtype.bits == 8) return TensorDataType::uint8;
            if (dtype.bits == 16) return TensorDataType::uint16;
            if (dtype.bits == 32) return TensorDataType::uint32;
            if (dtype.bits == 64) return TensorDataType::uint64;
            break;
        case kDLInt:
            if (dtype.bits == 32) return TensorDataType::int32;
            if (dtype.bits == 64) return TensorDataType::int64;
            break;
        case kDLFloat:
            if (dtype.bits == 16) return TensorDataType::float16;
            if (dtype.bits == 32) return TensorDataType::float32;
            if (dtype.bits == 64) return TensorDataType::float64;
            break;
        case kDLBfloat:
            if (dtype.bits == 16) return TensorDataType::bfloat16;
            break;
        default: break;
    }
    return std::nullopt;
}

StridedMemoryView StridedMemoryView::from_buffer(const Buffer& buffer, const DLPackLayout& layout,
                                                 bool read_only) {
    constexpr const char* call = "StridedMemoryView::from_buffer";
    if (buffer.is_closed())
        throw InvalidArgumentError(std::string(call) + ": " + buffer.description() + " is closed");
    const std::size_t bytes = span_bytes(layout, call);
    if (layout.byte_offset > buffer.size() || bytes > buffer.size() - layout.byte_offset)
        throw InvalidArgumentError(std::string(call) + ": shape " + describe_shape(layout.shape) +
                                   " of " + describe_dtype(layout.dtype) + " at byte_offset " +
                                   std::to_string(layout.byte_offset) + " spans " +
                                   std::to_string(bytes) + " bytes, beyond " +
                                   buffer.description());
    StridedMemoryView view;
    view.buffer_ = buffer;
    view.layout_ = layout;
    if (view.layout_.strides.empty()) view.layout_.strides = row_major(layout.shape);
    view.read_only_ = read_only;
    return view;
}

StridedMemoryView StridedMemoryView::from_dlpack(DLManagedTensor* tensor) {
    if (!tensor) throw InvalidArgumentError("StridedMemoryView::from_dlpack: null tensor");
    const DLTensor& dl = tensor->dl_tensor;
    if (dl.ndim < 0 || (dl.ndim > 0 && !dl.shape))
        throw InvalidArgumentError("StridedMemoryView::from_dlpack: " + std::to_string(dl.ndim) +
                                   " dimensions" + (dl.ndim > 0 ? " and a null shape" : ""));
    DLPackLayout layout;
    layout.shape.assign(dl.shape, dl.shape + dl.ndim);
    if (dl.strides) layout.strides.assign(dl.strides, dl.strides + dl.ndim);
    layout.dtype = dl.dtype;
    // from_dlpack's Buffer starts at the first element (data + byte_offset).
    StridedMemoryView view;
    view.buffer_ = cudacore::from_dlpack(tensor);  // consumes it only when it succeeds
    view.layout_ = std::move(layout);
    if (view.layout_.strides.empty()) view.layout_.strides = row_major(view.layout_.shape);
    return view;
}

std::size_t StridedMemoryView::size() const noexcept {
    std::size_t count = 1;
    for (std::int64_t extent : layout_.shape) count *= static_cast<std::size_t>(extent);
    return count;
}

bool StridedMemoryView::is_c_contiguous() const noexcept {
    const std::vector<std::int64_t> compact = row_major(layout_.shape);
    for (std::size_t i = 0; i < compact.size(); ++i)
        if (layout_.shape[i] > 1 && layout_.strides[i] != compact[i]) return false;
    return true;
}

void* StridedMemoryView::checked_data(const char* operation) const {
    if (is_closed())
        throw InvalidArgumentError(std::string(operation) + ": the strided memory view of shape " +
                                   describe_shape(layout_.shape) + " is closed (" +
                                   buffer_.description() + ")");
    return data();
}

int StridedMemoryView::device_ordinal() const { return buffer_.device_ordinal(); }
bool StridedMemoryView::is_device_accessible() const { return buffer_.is_device_accessible(); }
bool StridedMemoryView::is_host_accessible() const { return buffer_.is_host_accessible(); }

DLDevice StridedMemoryView::dl_device() const {
    checked_data("StridedMemoryView::dl_device");
    const bool device = buffer_.is_device_accessible(), host = buffer_.is_host_accessible();
    if (device && host) return {buffer_.is_managed() ? kDLCUDAManaged : kDLCUDAHost, 0};
    if (device) return {kDLCUDA, buffer_.device_ordinal()};
    return {kDLCPU, 0};
}

DLManagedTensor* StridedMemoryView::to_dlpack() const {
    checked_data("StridedMemoryView::to_dlpack");
    return cudacore::to_dlpack(buffer_, layout_);
}

namespace {
// The tensor map options of a view (checked by as_tensor_map) in the driver's order: innermost
// dimension first, strides in bytes.
TensorMapOptions innermost_first(const DLPackLayout& layout, const ViewTensorMapOptions& options,
                                 TensorDataType type, std::size_t element_bytes) {
    const std::size_t rank = layout.shape.size();
    TensorMapOptions map;
    map.element_type = type;
    for (std::size_t i = 0; i < rank; ++i) {
        const std::size_t from = rank - 1 - i;
        map.shape.push_back(static_cast<std::uint64_t>(layout.shape[from]));
        map.box.push_back(options.box[from]);
        if (!options.element_strides.empty())
            map.element_strides.push_back(options.element_strides[from]);
        if (i > 0)
            map.strides.push_back(static_cast<std::uint64_t>(layout.strides[from]) * element_bytes);
    }
    map.interleave = options.interleave;
    map.swizzle = options.swizzle;
    map.l2_promotion = options.l2_promotion;
    map.oob_fill = options.oob_fill;
    return map;
}
}  // namespace

TensorMap StridedMemoryView::as_tensor_map(const ViewTensorMapOptions& options) const {
    constexpr const char* call = "StridedMemoryView::as_tensor_map";
    char* first = static_cast<char*>(checked_data(call));
    const auto fail = [&](const std::string& problem) {
        throw InvalidArgumentError(std::string(call) + " (view of shape " +
                                   describe_shape(layout_.shape) + ", " +
                                   describe_dtype(layout_.dtype) + "): " + problem);
    };
    const std::size_t rank = layout_.shape.size();
    if (rank < 1 || rank > 5)
        fail("the view has " + std::to_string(rank) + " dimensions; a tensor map takes 1 to 5");
    TensorDataType type = TensorDataType::float32;
    if (options.element_type) {
        type = *options.element_type;
        if (element_size(type) != element_bytes())
            fail("element_type " + to_string(type) + " is " + std::to_string(element_size(type)) +
                 " bytes, the view's elements " + std::to_string(element_bytes()));
    } else if (const auto from_dtype = tensor_data_type(layout_.dtype)) {
        type = *from_dtype;
    } else {
        fail("TMA has no element type for it; give ViewTensorMapOptions::element_type");
    }
    if (options.box.size() != rank)
        fail("box has " + std::to_string(options.box.size()) + " value(s); the view has " +
             std::to_string(rank) + " dimensions");
    if (!options.element_strides.empty() && options.element_strides.size() != rank)
        fail("element_strides has " + std::to_string(options.element_strides.size()) +
             " value(s); the view has " + std::to_string(rank) + " dimensions");
    for (std::size_t i = 0; i < rank; ++i)
        if (layout_.strides[i] <= 0)
            fail("stride " + std::to_string(layout_.strides[i]) + " of dimension " +
                 std::to_string(i) + " is not positive");
    if (layout_.strides[rank - 1] != 1)
        fail("the innermost dimension (" + std::to_string(rank - 1) + ") has stride " +
             std::to_string(layout_.strides[rank - 1]) +
             " elements; a tensor map needs it contiguous (stride 1)");

    const TensorMapOptions map = innermost_first(layout_, options, type, element_bytes());
    if (layout_.byte_offset == 0) return TensorMap::tiled(buffer_, map);
    // The tensor starts inside the buffer: a buffer from there that holds the whole one.
    const Buffer from_first = Buffer::from_handle(
        reinterpret_cast<CUdeviceptr>(first), buffer_.size() - layout_.byte_offset,
        buffer_.memory_resource(), std::make_shared<Buffer>(buffer_));
    return TensorMap::tiled(from_first, map);
}

}  // namespace cudacore
