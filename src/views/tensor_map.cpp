#include "cudacore/tensor_map.hpp"

#include "cudacore/errors.hpp"
#include "loader/driver_api.hpp"
#include "memory/buffer_context.hpp"
#include "support/enum_text.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <span>

namespace cudacore {

namespace {

struct TypeInfo {
    const char* name;
    std::size_t size;
    bool floating;
};

constexpr TypeInfo type_infos[] = {
    {"uint8", 1, false},   {"uint16", 2, false},      {"uint32", 4, false},
    {"int32", 4, false},   {"uint64", 8, false},      {"int64", 8, false},
    {"float16", 2, true},  {"float32", 4, true},      {"float64", 8, true},
    {"bfloat16", 2, true}, {"float32_ftz", 4, true},  {"tfloat32", 4, true},
    {"tfloat32_ftz", 4, true},
};
constexpr int type_count = sizeof type_infos / sizeof type_infos[0];

bool valid(TensorDataType type) {
    const int value = static_cast<int>(type);
    return value >= 0 && value < type_count;
}

constexpr std::uint64_t max_dimension = 1ull << 32;
constexpr std::uint64_t stride_limit = 1ull << 40;
constexpr std::uint32_t max_rank = 5;

// a * b, or the largest value when that overflows (then any limit it is checked against fails).
std::uint64_t saturating_multiply(std::uint64_t a, std::uint64_t b) {
    std::uint64_t product = 0;
    return __builtin_mul_overflow(a, b, &product) ? UINT64_MAX : product;
}
std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
    std::uint64_t sum = 0;
    return __builtin_add_overflow(a, b, &sum) ? UINT64_MAX : sum;
}

// Collects the context of one validation so every message names the call and the field.
class Checker {
public:
    Checker(const char* call, const char* options, const Buffer& buffer)
        : call_(call), options_(options), buffer_(buffer) {}

    [[noreturn]] void fail(const std::string& field, const std::string& problem) const {
        char address[32];
        std::snprintf(address, sizeof address, "0x%llx",
                      static_cast<unsigned long long>(buffer_.handle()));
        throw InvalidArgumentError(std::string(call_) + " (buffer at " + address + ", " +
                                   std::to_string(buffer_.size()) + " bytes): " + options_ +
                                   "::" + field + " " + problem);
    }
    static std::string at(const char* field, std::size_t index) {
        return std::string(field) + "[" + std::to_string(index) + "]";
    }

private:
    const char* call_;
    const char* options_;
    const Buffer& buffer_;
};

unsigned swizzle_span(TensorMapSwizzle swizzle) {
    switch (swizzle) {
        case TensorMapSwizzle::none: return 0;
        case TensorMapSwizzle::bytes32: return 32;
        case TensorMapSwizzle::bytes64: return 64;
        case TensorMapSwizzle::bytes128: return 128;
    }
    return 0;
}

// What the shared checks found: the byte strides to hand the driver, and the bytes from the
// first element to the end of the last (what any buffer the map points at must hold).
struct CheckedLayout {
    std::vector<std::uint64_t> strides;
    std::uint64_t span = 0;
};

// The enumerations of the options: element type, interleave, swizzle, L2 promotion and fill.
// Returns the element type's description.
template <class Options>
const TypeInfo& check_map_enums(const Checker& check, const Options& options) {
    if (!valid(options.element_type))
        check.fail("element_type", "is not a TensorDataType (value " +
                                       std::to_string(static_cast<int>(options.element_type)) +
                                       ")");
    const TypeInfo& type = type_infos[static_cast<int>(options.element_type)];
    const int interleave = static_cast<int>(options.interleave);
    if (interleave < 0 || interleave > 2)
        check.fail("interleave", "is not a TensorMapInterleave (value " +
                                     std::to_string(interleave) + ")");
    const int swizzle = static_cast<int>(options.swizzle);
    if (swizzle < 0 || swizzle > 3)
        check.fail("swizzle", "is not a TensorMapSwizzle (value " + std::to_string(swizzle) + ")");
    const int l2 = static_cast<int>(options.l2_promotion);
    if (l2 < 0 || l2 > 3)
        check.fail("l2_promotion",
                   "is not a TensorMapL2Promotion (value " + std::to_string(l2) + ")");
    const int fill = static_cast<int>(options.oob_fill);
    if (fill < 0 || fill > 1)
        check.fail("oob_fill", "is not a TensorMapOobFill (value " + std::to_string(fill) + ")");
    if (options.oob_fill == TensorMapOobFill::nan_request_zero_fma && !type.floating)
        check.fail("oob_fill", std::string("is nan_request_zero_fma, which needs a floating point "
                                           "element_type, not ") + type.name);
    return type;
}

// The rank (at least `min_rank`, 3 with interleave) and each dimension's size.
template <class Options>
void check_map_shape(const Checker& check, const Options& options, std::uint32_t min_rank) {
    const bool interleaved = options.interleave != TensorMapInterleave::none;
    const std::size_t rank = options.shape.size();
    const std::uint32_t least_rank = interleaved ? std::max(min_rank, 3u) : min_rank;
    if (rank < least_rank || rank > max_rank)
        check.fail("shape", "has " + std::to_string(rank) + " dimension(s); the rank must be " +
                                std::to_string(least_rank) + " to " + std::to_string(max_rank) +
                                (interleaved && min_rank < 3 ? " with interleave" : ""));
    for (std::size_t i = 0; i < rank; ++i) {
        if (options.shape[i] == 0 || options.shape[i] > max_dimension)
            check.fail(Checker::at("shape", i), "is " + std::to_string(options.shape[i]) +
                                                    "; it must be 1 to 2^32");
    }
}

// Byte strides of dimensions 1..rank-1: given (each a multiple of `alignment`, below 2^40,
// increasing without overlap), or densely packed.
template <class Options>
std::vector<std::uint64_t> checked_map_strides(const Checker& check, const Options& options,
                                               const TypeInfo& type, unsigned alignment) {
    const std::size_t rank = options.shape.size();
    std::vector<std::uint64_t> strides = options.strides;
    if (strides.empty()) {
        std::uint64_t stride = options.shape[0] * type.size;
        for (std::size_t i = 1; i < rank; ++i) {
            strides.push_back(stride);
            stride = saturating_multiply(stride, options.shape[i]);
        }
    } else if (strides.size() != rank - 1) {
        check.fail("strides", "has " + std::to_string(strides.size()) + " value(s); it needs " +
                                  std::to_string(rank - 1) +
                                  " (rank - 1: byte strides of dimensions 1.." +
                                  std::to_string(rank - 1) + ") or none for a packed tensor");
    }
    const std::uint64_t row_bytes = options.shape[0] * type.size;
    for (std::size_t i = 0; i < strides.size(); ++i) {
        const std::string field = Checker::at("strides", i);
        if (strides[i] % alignment != 0)
            check.fail(field, "is " + std::to_string(strides[i]) + " bytes, not a multiple of " +
                                  std::to_string(alignment) +
                                  (options.strides.empty()
                                       ? " (the packed layout's stride: pad the rows and pass "
                                         "strides)"
                                       : ""));
        if (strides[i] >= stride_limit)
            check.fail(field, "is " + std::to_string(strides[i]) + " bytes; it must be below 2^40");
        // Increasing, and no overlap: each index of dimension i+1 skips a whole dimension i.
        const std::uint64_t least =
            i == 0 ? row_bytes : saturating_multiply(strides[i - 1], options.shape[i]);
        if (strides[i] < least)
            check.fail(field, "is " + std::to_string(strides[i]) + " bytes, less than the " +
                                  std::to_string(least) + " bytes of dimension " +
                                  std::to_string(i) + " (" +
                                  (i == 0 ? "shape[0] * element size"
                                          : "strides[" + std::to_string(i - 1) + "] * shape[" +
                                                std::to_string(i) + "]") +
                                  "): strides must increase without overlap");
    }
    return strides;
}

// The checks shared by tiled and im2col maps: buffer, element type, rank, shape, strides,
// element strides, interleave/swizzle/L2/fill.
template <class Options>
CheckedLayout check_common(const Checker& check, const Buffer& buffer, const Options& options,
                           std::uint32_t min_rank) {
    if (buffer.is_closed()) check.fail("buffer", "is closed (or empty)");
    const TypeInfo& type = check_map_enums(check, options);
    check_map_shape(check, options, min_rank);
    const std::size_t rank = options.shape.size();
    const unsigned alignment = options.interleave == TensorMapInterleave::bytes32 ? 32 : 16;
    if (buffer.handle() % alignment != 0)
        check.fail("buffer", "address is not aligned to " + std::to_string(alignment) + " bytes" +
                                 (alignment == 32 ? " (interleave bytes32)" : ""));
    std::vector<std::uint64_t> strides = checked_map_strides(check, options, type, alignment);
    // The last element must lie inside the buffer.
    std::uint64_t end = options.shape[0] * type.size;
    for (std::size_t i = 0; i < strides.size(); ++i)
        end = saturating_add(end, saturating_multiply(options.shape[i + 1] - 1, strides[i]));
    if (end > buffer.size())
        check.fail("shape", "with these strides spans " + std::to_string(end) +
                                " bytes, more than the buffer's " + std::to_string(buffer.size()));

    if (!options.element_strides.empty()) {
        if (options.element_strides.size() != rank)
            check.fail("element_strides", "has " + std::to_string(options.element_strides.size()) +
                                              " value(s); it needs " + std::to_string(rank) +
                                              " (one per dimension) or none");
        for (std::size_t i = 0; i < rank; ++i) {
            const std::uint32_t step = options.element_strides[i];
            if (step == 0 || step > 8)
                check.fail(Checker::at("element_strides", i),
                           "is " + std::to_string(step) + "; it must be 1 to 8");
        }
    }
    if (options.interleave == TensorMapInterleave::bytes32 &&
        options.swizzle != TensorMapSwizzle::bytes32)
        check.fail("swizzle", "must be bytes32 when interleave is bytes32");
    if (!buffer.is_device_accessible())
        check.fail("buffer", "is not device-accessible memory (" +
                                 (buffer.memory_resource() ? buffer.memory_resource()->description()
                                                           : std::string("unknown memory")) +
                                 ")");
    return {std::move(strides), end};
}

// Inner bytes of what one copy moves (box[0] or channels_per_pixel elements) against the swizzle.
template <class Options>
void check_inner_bytes(const Checker& check, const Options& options, const char* field,
                       std::uint64_t inner_elements) {
    if (options.interleave != TensorMapInterleave::none) return;
    const std::uint64_t bytes = inner_elements * element_size(options.element_type);
    if (std::string(field) == "box[0]" && bytes % 16 != 0)
        check.fail(field, "spans " + std::to_string(bytes) +
                              " bytes; the inner box must be a multiple of 16 bytes");
    const unsigned span = swizzle_span(options.swizzle);
    if (span != 0 && bytes > span)
        check.fail(field, "spans " + std::to_string(bytes) + " bytes, more than the " +
                              std::to_string(span) + "-byte swizzle span (swizzle bytes" +
                              std::to_string(span) + ")");
}

CUtensorMapDataType to_driver(TensorDataType type) {
    return static_cast<CUtensorMapDataType>(static_cast<int>(type));  // same order
}

// The byte strides as the driver takes them. A rank-1 map has none, but the driver still
// refuses a null globalStrides (CUDA_ERROR_INVALID_VALUE), which an empty vector's data() may
// be: the array always has room for max_rank - 1 values, so its address is never null.
class DriverStrides {
public:
    explicit DriverStrides(const std::vector<std::uint64_t>& strides) {
        std::copy(strides.begin(), strides.end(), values_.begin());
    }
    const cuuint64_t* data() const noexcept { return values_.data(); }

private:
    std::array<cuuint64_t, max_rank - 1> values_{};
};

std::vector<cuuint32_t> element_strides_or_ones(const std::vector<std::uint32_t>& given,
                                                std::size_t rank) {
    if (!given.empty()) return {given.begin(), given.end()};
    return std::vector<cuuint32_t>(rank, 1);
}

std::string describe_map(const Buffer& buffer, TensorDataType type, std::size_t rank) {
    char address[32];
    std::snprintf(address, sizeof address, "0x%llx",
                  static_cast<unsigned long long>(buffer.handle()));
    return std::string("rank ") + std::to_string(rank) + " " + to_string(type) +
           " tensor at " + address + " (" + std::to_string(buffer.size()) + " bytes)";
}

}  // namespace

std::size_t element_size(TensorDataType type) {
    if (!valid(type))
        throw InvalidArgumentError("element_size: not a TensorDataType (value " +
                                   std::to_string(static_cast<int>(type)) + ")");
    return type_infos[static_cast<int>(type)].size;
}

std::string to_string(TensorDataType type) {
    return valid(type) ? type_infos[static_cast<int>(type)].name
                       : "TensorDataType(" + std::to_string(static_cast<int>(type)) + ")";
}

TensorMap TensorMap::tiled(const Buffer& buffer, const TensorMapOptions& options) {
    const Checker check("TensorMap::tiled", "TensorMapOptions", buffer);
    const CheckedLayout layout = check_common(check, buffer, options, 1);
    const std::vector<std::uint64_t>& strides = layout.strides;
    const std::size_t rank = options.shape.size();
    if (options.box.size() != rank)
        check.fail("box", "has " + std::to_string(options.box.size()) + " value(s); it needs " +
                              std::to_string(rank) + " (one per dimension of shape)");
    for (std::size_t i = 0; i < rank; ++i) {
        if (options.box[i] == 0 || options.box[i] > 256)
            check.fail(Checker::at("box", i),
                       "is " + std::to_string(options.box[i]) + "; it must be 1 to 256");
    }
    check_inner_bytes(check, options, "box[0]", options.box[0]);

    const std::vector<cuuint64_t> shape(options.shape.begin(), options.shape.end());
    const DriverStrides byte_strides(strides);
    const std::vector<cuuint32_t> box(options.box.begin(), options.box.end());
    const std::vector<cuuint32_t> steps = element_strides_or_ones(options.element_strides, rank);
    TensorMap map;
    const detail::BufferContext context(buffer);  // the encode fails without a current context
    detail::check(
        detail::driver().cuTensorMapEncodeTiled(
            &map.descriptor_, to_driver(options.element_type), static_cast<cuuint32_t>(rank),
            buffer.data(), shape.data(), byte_strides.data(), box.data(), steps.data(),
            static_cast<CUtensorMapInterleave>(options.interleave),
            static_cast<CUtensorMapSwizzle>(options.swizzle),
            static_cast<CUtensorMapL2promotion>(options.l2_promotion),
            static_cast<CUtensorMapFloatOOBfill>(options.oob_fill)),
        "cuTensorMapEncodeTiled", [&] { return describe_map(buffer, options.element_type, rank); });
    map.buffer_ = buffer;
    map.rank_ = static_cast<std::uint32_t>(rank);
    map.element_type_ = options.element_type;
    map.span_bytes_ = layout.span;
    map.alignment_ = options.interleave == TensorMapInterleave::bytes32 ? 32 : 16;
    map.device_ordinal_ = buffer.device_ordinal();
    return map;
}

TensorMap TensorMap::im2col(const Buffer& buffer, const TensorMapIm2colOptions& options) {
    const Checker check("TensorMap::im2col", "TensorMapIm2colOptions", buffer);
    const CheckedLayout layout = check_common(check, buffer, options, 3);
    const std::vector<std::uint64_t>& strides = layout.strides;
    const std::size_t rank = options.shape.size();
    const std::size_t spatial = rank - 2;
    const int limit = rank == 3 ? 32768 : rank == 4 ? 128 : 16;
    for (const auto* corner : {&options.lower_corner, &options.upper_corner}) {
        const char* field = corner == &options.lower_corner ? "lower_corner" : "upper_corner";
        if (corner->size() != spatial)
            check.fail(field, "has " + std::to_string(corner->size()) + " value(s); it needs " +
                                  std::to_string(spatial) + " (rank - 2)");
        for (std::size_t i = 0; i < spatial; ++i) {
            if ((*corner)[i] < -limit || (*corner)[i] > limit - 1)
                check.fail(Checker::at(field, i),
                           "is " + std::to_string((*corner)[i]) + "; for rank " +
                               std::to_string(rank) + " it must be within [" +
                               std::to_string(-limit) + ", " + std::to_string(limit - 1) + "]");
        }
    }
    if (options.channels_per_pixel == 0 || options.channels_per_pixel > 256)
        check.fail("channels_per_pixel", "is " + std::to_string(options.channels_per_pixel) +
                                             "; it must be 1 to 256");
    if (options.pixels_per_column == 0 || options.pixels_per_column > 1024)
        check.fail("pixels_per_column", "is " + std::to_string(options.pixels_per_column) +
                                            "; it must be 1 to 1024");
    check_inner_bytes(check, options, "channels_per_pixel", options.channels_per_pixel);

    const std::vector<cuuint64_t> shape(options.shape.begin(), options.shape.end());
    const DriverStrides byte_strides(strides);
    const std::vector<cuuint32_t> steps = element_strides_or_ones(options.element_strides, rank);
    TensorMap map;
    const detail::BufferContext context(buffer);  // the encode fails without a current context
    detail::check(
        detail::driver().cuTensorMapEncodeIm2col(
            &map.descriptor_, to_driver(options.element_type), static_cast<cuuint32_t>(rank),
            buffer.data(), shape.data(), byte_strides.data(), options.lower_corner.data(),
            options.upper_corner.data(), options.channels_per_pixel, options.pixels_per_column,
            steps.data(), static_cast<CUtensorMapInterleave>(options.interleave),
            static_cast<CUtensorMapSwizzle>(options.swizzle),
            static_cast<CUtensorMapL2promotion>(options.l2_promotion),
            static_cast<CUtensorMapFloatOOBfill>(options.oob_fill)),
        "cuTensorMapEncodeIm2col",
        [&] { return describe_map(buffer, options.element_type, rank); });
    map.buffer_ = buffer;
    map.rank_ = static_cast<std::uint32_t>(rank);
    map.element_type_ = options.element_type;
    map.span_bytes_ = layout.span;
    map.alignment_ = options.interleave == TensorMapInterleave::bytes32 ? 32 : 16;
    map.device_ordinal_ = buffer.device_ordinal();
    return map;
}

void TensorMap::replace_address(const Buffer& buffer) {
    const std::string map = describe_map(buffer_, element_type_, rank_);
    const auto fail = [&](const std::string& problem) {
        char address[32];
        std::snprintf(address, sizeof address, "0x%llx",
                      static_cast<unsigned long long>(buffer.handle()));
        throw InvalidArgumentError("TensorMap::replace_address (buffer at " + std::string(address) +
                                   ", " + std::to_string(buffer.size()) + " bytes): the buffer " +
                                   problem + "; the map describes a " + map);
    };
    if (rank_ == 0) fail("cannot replace the address of a map that was moved from");
    if (buffer.is_closed()) fail("is closed (or empty)");
    if (buffer.handle() % alignment_ != 0)
        fail("address is not aligned to " + std::to_string(alignment_) + " bytes" +
             (alignment_ == 32 ? " (interleave bytes32)" : ""));
    if (!buffer.is_device_accessible())
        fail("is not device-accessible memory (" +
             (buffer.memory_resource() ? buffer.memory_resource()->description()
                                       : std::string("unknown memory")) +
             ")");
    // Memory bound to no device (pinned host memory) is reachable from every device.
    const int device = buffer.device_ordinal();
    if (device_ordinal_ >= 0 && device >= 0 && device != device_ordinal_)
        fail("is on device " + std::to_string(device) + ", the map's tensor on device " +
             std::to_string(device_ordinal_));
    if (buffer.size() < span_bytes_)
        fail("is smaller than the " + std::to_string(span_bytes_) + " bytes the tensor spans");

    // Replaced in a copy: on failure the map keeps its address and its buffer.
    CUtensorMap updated = descriptor_;
    const detail::BufferContext context(buffer);
    detail::check(detail::driver().cuTensorMapReplaceAddress(&updated, buffer.data()),
                  "cuTensorMapReplaceAddress", [&] {
                      return describe_map(buffer, element_type_, rank_) + " (was " + map + ")";
                  });
    descriptor_ = updated;
    buffer_ = buffer;
    if (device >= 0) device_ordinal_ = device;
}

}  // namespace cudacore

namespace cudacore {

std::string to_string(TensorMapInterleave interleave) {
    static constexpr detail::EnumText<TensorMapInterleave> names[] = {
        {TensorMapInterleave::none, "none"},
        {TensorMapInterleave::bytes16, "bytes16"},
        {TensorMapInterleave::bytes32, "bytes32"},
    };
    return detail::enum_text(interleave, names, "TensorMapInterleave");
}

std::string to_string(TensorMapSwizzle swizzle) {
    static constexpr detail::EnumText<TensorMapSwizzle> names[] = {
        {TensorMapSwizzle::none, "none"},
        {TensorMapSwizzle::bytes32, "bytes32"},
        {TensorMapSwizzle::bytes64, "bytes64"},
        {TensorMapSwizzle::bytes128, "bytes128"},
    };
    return detail::enum_text(swizzle, names, "TensorMapSwizzle");
}

std::string to_string(TensorMapL2Promotion promotion) {
    static constexpr detail::EnumText<TensorMapL2Promotion> names[] = {
        {TensorMapL2Promotion::none, "none"},
        {TensorMapL2Promotion::bytes64, "bytes64"},
        {TensorMapL2Promotion::bytes128, "bytes128"},
        {TensorMapL2Promotion::bytes256, "bytes256"},
    };
    return detail::enum_text(promotion, names, "TensorMapL2Promotion");
}

std::string to_string(TensorMapOobFill fill) {
    static constexpr detail::EnumText<TensorMapOobFill> names[] = {
        {TensorMapOobFill::zero, "zero"},
        {TensorMapOobFill::nan_request_zero_fma, "nan_request_zero_fma"},
    };
    return detail::enum_text(fill, names, "TensorMapOobFill");
}

}  // namespace cudacore
