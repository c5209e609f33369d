#include "cudacore/array_copy.hpp"

#include "cudacore/errors.hpp"
#include "runtime/release/release.hpp"
#include "support/box_access.hpp"
#include "errors/closed_object.hpp"
#include "views/array_box.hpp"
#include "views/array_copy_plan.hpp"
#include "views/object_descriptions.hpp"

#include <cstdio>
#include <optional>

namespace cudacore {

namespace detail {

namespace {

std::size_t extent_or_one(std::size_t size) { return size == 0 ? 1 : size; }

// a * b + c, or SIZE_MAX when that overflows (then every bound it is checked against fails).
std::size_t saturating(std::size_t a, std::size_t b, std::size_t c = 0) {
    std::size_t product = 0, sum = 0;
    if (__builtin_mul_overflow(a, b, &product) || __builtin_add_overflow(product, c, &sum))
        return SIZE_MAX;
    return sum;
}

[[noreturn]] void refuse(const char* call, const std::string& problem) {
    throw InvalidArgumentError(std::string(call) + ": " + problem);
}

}  // namespace

ResolvedRegion resolve_region(const char* call, const char* side, const ArrayOptions& options,
                              ArrayShape, const ArrayRegion& region,
                              const std::string& array_description) {
    const std::size_t extents[3] = {options.width, extent_or_one(options.height),
                                    extent_or_one(options.depth)};
    const std::size_t origin[3] = {region.x, region.y, region.z};
    const std::size_t asked[3] = {region.width, region.height, region.depth};
    static const char* const origin_names[3] = {"x", "y", "z"};
    static const char* const extent_names[3] = {"width", "height", "depth"};
    std::size_t resolved[3];
    for (int i = 0; i < 3; ++i) {
        if (origin[i] >= extents[i])
            refuse(call, std::string(side) + " ArrayRegion::" + origin_names[i] + " " +
                             std::to_string(origin[i]) + " is outside " + array_description +
                             " (" + extent_names[i] + " " + std::to_string(extents[i]) + ")");
        resolved[i] = asked[i] == 0 ? extents[i] - origin[i] : asked[i];
        if (resolved[i] > extents[i] - origin[i])
            refuse(call, std::string(side) + " ArrayRegion::" + extent_names[i] + " " +
                             std::to_string(asked[i]) + " from " + origin_names[i] + " " +
                             std::to_string(origin[i]) + " runs past the end of " +
                             array_description + " (" + extent_names[i] + " " +
                             std::to_string(extents[i]) + ")");
    }
    return {origin[0], origin[1], origin[2], resolved[0], resolved[1], resolved[2]};
}

std::size_t copy_element_size(const char* call, const ArrayOptions& options,
                              const std::string& array_description) {
    const ArrayFormatInfo& info = format_info(options.format);
    if (info.kind == ArrayFormatKind::block_compressed || info.kind == ArrayFormatKind::video)
        refuse(call, array_description + " has the " +
                         (info.kind == ArrayFormatKind::video ? std::string("video")
                                                              : std::string("block-compressed")) +
                         " format " + info.name +
                         ", which cudacore's array copies do not offer (no single element size)");
    return element_size(options.format, options.channels);
}

LinearPlan plan_linear(const char* call, const ResolvedRegion& region, std::size_t element_size,
                       const LinearLayout& layout, std::size_t linear_bytes,
                       const std::string& linear_description) {
    LinearPlan plan;
    const std::size_t row_bytes = saturating(region.width, element_size);
    plan.offset = layout.offset;
    plan.pitch = layout.pitch == 0 ? row_bytes : layout.pitch;
    if (plan.pitch < row_bytes)
        refuse(call, "LinearLayout::pitch " + std::to_string(layout.pitch) +
                         " is less than a row of the region (" + std::to_string(region.width) +
                         " elements of " + std::to_string(element_size) + " bytes = " +
                         std::to_string(row_bytes) + ") in " + linear_description);
    plan.rows = layout.rows == 0 ? region.height : layout.rows;
    if (plan.rows < region.height)
        refuse(call, "LinearLayout::rows " + std::to_string(layout.rows) +
                         " is less than the region's height " + std::to_string(region.height) +
                         " in " + linear_description);
    // The last byte copied: the last row of the last slice, `row_bytes` long.
    const std::size_t slice_bytes = saturating(plan.pitch, plan.rows);
    std::size_t span = saturating(slice_bytes, region.depth - 1,
                                  saturating(plan.pitch, region.height - 1, row_bytes));
    span = span > SIZE_MAX - plan.offset ? SIZE_MAX : span + plan.offset;
    plan.span = span;
    // SIZE_MAX stands for an overflow: no memory holds that.
    if (span > linear_bytes || span == SIZE_MAX)
        refuse(call, "the copy reaches " + (span == SIZE_MAX ? std::string("past 2^64") : std::to_string(span)) +
                         " bytes (offset " + std::to_string(plan.offset) + ", pitch " +
                         std::to_string(plan.pitch) + ", " + std::to_string(plan.rows) +
                         " rows a slice, region " + std::to_string(region.width) + " x " +
                         std::to_string(region.height) + " x " + std::to_string(region.depth) +
                         ") but " + linear_description + " holds only " + std::to_string(linear_bytes) + " bytes");
    return plan;
}

namespace {

// One side of a copy.
struct Side {
    CUmemorytype type = CU_MEMORYTYPE_ARRAY;
    CUarray array = nullptr;
    const ArrayBox* box = nullptr;
    CUdeviceptr device = 0;  // unified address of a Buffer (device, pinned or managed)
    void* host = nullptr;
    std::size_t x_bytes = 0, y = 0, z = 0;  // array side
    std::size_t pitch = 0, rows = 0;        // linear side
};

Side array_side(const ArrayBox& box, const ResolvedRegion& region, std::size_t element_size) {
    Side side;
    side.type = CU_MEMORYTYPE_ARRAY;
    side.array = box.handle;
    side.box = &box;
    side.x_bytes = region.x * element_size;
    side.y = region.y;
    side.z = region.z;
    return side;
}

template <class Memcpy>
void fill(Memcpy& copy, const Side& source, const Side& destination, bool three_d) {
    copy.srcMemoryType = source.type;
    copy.srcArray = source.array;
    copy.srcDevice = source.device;
    copy.srcHost = source.host;
    copy.srcXInBytes = source.x_bytes;
    copy.srcY = source.y;
    copy.srcPitch = source.pitch;
    copy.dstMemoryType = destination.type;
    copy.dstArray = destination.array;
    copy.dstDevice = destination.device;
    copy.dstHost = destination.host;
    copy.dstXInBytes = destination.x_bytes;
    copy.dstY = destination.y;
    copy.dstPitch = destination.pitch;
    if constexpr (requires { copy.srcZ; }) {
        copy.srcZ = source.z;
        copy.srcHeight = source.rows;
        copy.dstZ = destination.z;
        copy.dstHeight = destination.rows;
    }
    (void)three_d;
}

template <class Describe>
void enqueue(const char* call, const Stream& stream, const Side& source, const Side& destination,
             const ResolvedRegion& region, std::size_t element_size, bool three_d,
             Describe&& describe) {
    stream.check_open(call);
    const auto& stream_box = detail::box_of(stream);
    if (!stream_box) refuse(call, "the Stream is empty (moved-from); copies need a stream");
    start_deferred_releases();  // the arrays' releases wait for this copy's stream
    CUresult status = CUDA_SUCCESS;
    const char* driver_call = three_d ? "cuMemcpy3DAsync" : "cuMemcpy2DAsync";
    {
        std::optional<ContextScope> scope;
        if (stream_box && stream_box->context) scope.emplace(*stream_box->context);
        if (three_d) {
            CUDA_MEMCPY3D copy{};
            fill(copy, source, destination, true);
            copy.WidthInBytes = region.width * element_size;
            copy.Height = region.height;
            copy.Depth = region.depth;
            status = driver().cuMemcpy3DAsync(&copy, stream.handle());
        } else {
            CUDA_MEMCPY2D copy{};
            fill(copy, source, destination, false);
            copy.WidthInBytes = region.width * element_size;
            copy.Height = region.height;
            status = driver().cuMemcpy2DAsync(&copy, stream.handle());
        }
    }
    check(status, driver_call, describe);
    // The arrays are destroyed only once this stream is done (runtime/release/release.hpp: release_after_uses).
    if (stream_box) {
        if (source.box) const_cast<ArrayBox*>(source.box)->uses.note(stream_box);
        if (destination.box) const_cast<ArrayBox*>(destination.box)->uses.note(stream_box);
    }
}

ArrayBox& open_array(const char* call, const CudaArray& array, const char* role) {
    if (!detail::box_of(array) || !detail::box_of(array)->handle) {
        if (array.is_closed()) detail::open_box_of(array, call);  // "...: <array> is closed"
        refuse(call, std::string("the ") + role + " is a moved-from CudaArray");
    }
    return *detail::box_of(array);
}

std::string describe_host(const void* host, std::size_t bytes) {
    char text[64];
    std::snprintf(text, sizeof text, "host memory %p of %zu bytes", host, bytes);
    return text;
}

// A copy between an array and linear memory (`linear` without its pitch and rows yet).
void copy_linear(const char* call, const Stream& stream, const CudaArray& array, bool to_array,
                 Side linear, std::size_t linear_bytes, const std::string& linear_description,
                 const LinearLayout& layout, const ArrayRegion& region) {
    ArrayBox& box = open_array(call, array, to_array ? "destination" : "source");
    const std::string array_description = array.description();
    const std::size_t element_size = copy_element_size(call, box.options, array_description);
    const ResolvedRegion resolved =
        resolve_region(call, to_array ? "destination" : "source", box.options, box.shape, region,
                       array_description);
    const LinearPlan plan =
        plan_linear(call, resolved, element_size, layout, linear_bytes,
                    linear_description + (to_array ? " (copied to " : " (copied from ") +
                        array_description + ")");
    if (linear.type == CU_MEMORYTYPE_HOST)
        linear.host = static_cast<char*>(linear.host) + plan.offset;
    else
        linear.device += plan.offset;
    linear.pitch = plan.pitch;
    linear.rows = plan.rows;
    const Side array_end = array_side(box, resolved, element_size);
    auto describe = [&] {
        return (to_array ? "from " + linear_description + " to " + array_description
                         : "from " + array_description + " to " + linear_description) +
               " (region at " + std::to_string(resolved.x) + ", " + std::to_string(resolved.y) +
               ", " + std::to_string(resolved.z) + " of " + std::to_string(resolved.width) +
               " x " + std::to_string(resolved.height) + " x " + std::to_string(resolved.depth) +
               ", pitch " + std::to_string(plan.pitch) + ")";
    };
    const bool three_d = needs_3d_copy(box.shape);
    if (to_array)
        enqueue(call, stream, linear, array_end, resolved, element_size, three_d, describe);
    else
        enqueue(call, stream, array_end, linear, resolved, element_size, three_d, describe);
}

Side buffer_side(const char* call, const Buffer& buffer, const char* role) {
    if (buffer.is_closed())
        refuse(call, std::string("the ") + role + " Buffer is closed (or empty)");
    Side side;
    side.type = CU_MEMORYTYPE_UNIFIED;
    side.device = buffer.handle();
    return side;
}

Side host_side(const char* call, const void* host, std::size_t bytes, const char* role) {
    if (!host)
        refuse(call, std::string("null host pointer (") + std::to_string(bytes) + " bytes) as " +
                         role);
    Side side;
    side.type = CU_MEMORYTYPE_HOST;
    side.host = const_cast<void*>(host);
    return side;
}

}  // namespace

}  // namespace detail

void copy_to_array(const CudaArray& destination, const Buffer& source, const Stream& stream,
                   const LinearLayout& layout, const ArrayRegion& region) {
    constexpr const char* call = "copy_to_array";
    detail::Side side = detail::buffer_side(call, source, "source");
    detail::copy_linear(call, stream, destination, true, side, source.size(),
                        detail::describe_buffer(source), layout, region);
}

void copy_to_array(const CudaArray& destination, const void* host, std::size_t host_bytes,
                   const Stream& stream, const LinearLayout& layout, const ArrayRegion& region) {
    constexpr const char* call = "copy_to_array";
    detail::Side side = detail::host_side(call, host, host_bytes, "source");
    detail::copy_linear(call, stream, destination, true, side, host_bytes,
                        detail::describe_host(host, host_bytes), layout, region);
}

void copy_from_array(const Buffer& destination, const CudaArray& source, const Stream& stream,
                     const LinearLayout& layout, const ArrayRegion& region) {
    constexpr const char* call = "copy_from_array";
    detail::Side side = detail::buffer_side(call, destination, "destination");
    detail::copy_linear(call, stream, source, false, side, destination.size(),
                        detail::describe_buffer(destination), layout, region);
}

void copy_from_array(void* host, std::size_t host_bytes, const CudaArray& source,
                     const Stream& stream, const LinearLayout& layout, const ArrayRegion& region) {
    constexpr const char* call = "copy_from_array";
    detail::Side side = detail::host_side(call, host, host_bytes, "destination");
    detail::copy_linear(call, stream, source, false, side, host_bytes,
                        detail::describe_host(host, host_bytes), layout, region);
}

void copy_between_arrays(const CudaArray& destination, const CudaArray& source, const Stream& stream,
                         const ArrayRegion& destination_origin, const ArrayRegion& source_region) {
    constexpr const char* call = "copy_between_arrays";
    detail::ArrayBox& from = detail::open_array(call, source, "source");
    detail::ArrayBox& to = detail::open_array(call, destination, "destination");
    const std::string from_text = source.description();
    const std::string to_text = destination.description();
    const std::size_t element_size = detail::copy_element_size(call, from.options, from_text);
    const std::size_t to_size = detail::copy_element_size(call, to.options, to_text);
    if (element_size != to_size)
        throw InvalidArgumentError(std::string(call) + ": elements differ in size: " +
                                   std::to_string(element_size) + " bytes in " + from_text +
                                   ", " + std::to_string(to_size) + " bytes in " + to_text);
    if (from.ordinal != to.ordinal)
        throw InvalidArgumentError(std::string(call) + ": the arrays are on different devices (" +
                                   from_text + ", " + to_text + ")");
    const detail::ResolvedRegion region =
        detail::resolve_region(call, "source", from.options, from.shape, source_region, from_text);
    ArrayRegion wanted = destination_origin;
    auto same = [](std::size_t given, std::size_t resolved) { return given == 0 || given == resolved; };
    if (!same(wanted.width, region.width) || !same(wanted.height, region.height) ||
        !same(wanted.depth, region.depth))
        throw InvalidArgumentError(std::string(call) +
                                   ": the destination region's extents differ from the source "
                                   "region's (" + std::to_string(region.width) + " x " +
                                   std::to_string(region.height) + " x " +
                                   std::to_string(region.depth) + "); give 0 or the same");
    wanted.width = region.width;
    wanted.height = region.height;
    wanted.depth = region.depth;
    const detail::ResolvedRegion target =
        detail::resolve_region(call, "destination", to.options, to.shape, wanted, to_text);
    const detail::Side from_side = detail::array_side(from, region, element_size);
    const detail::Side to_side = detail::array_side(to, target, element_size);
    const bool three_d = detail::needs_3d_copy(from.shape) || detail::needs_3d_copy(to.shape);
    detail::enqueue(call, stream, from_side, to_side, region, element_size, three_d,
                    [&] { return "from " + from_text + " to " + to_text; });
}

// The deprecated forms, with the source first.
void copy_from_array(const CudaArray& source, const Buffer& destination, const Stream& stream,
                     const LinearLayout& layout, const ArrayRegion& region) {
    copy_from_array(destination, source, stream, layout, region);
}

void copy_from_array(const CudaArray& source, void* host, std::size_t host_bytes, const Stream& stream,
                     const LinearLayout& layout, const ArrayRegion& region) {
    copy_from_array(host, host_bytes, source, stream, layout, region);
}

void copy_array(const CudaArray& source, const CudaArray& destination, const Stream& stream,
                const ArrayRegion& source_region, const ArrayRegion& destination_origin) {
    copy_between_arrays(destination, source, stream, destination_origin, source_region);
}

}  // namespace cudacore
