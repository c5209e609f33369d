// StridedMemoryView and cuda::std::mdspan without a GPU (host memory of a test resource): a view
// read through as_mdspan element by element, the refusals, and views made from mdspans of each
// layout over part of a Buffer.
#include "empty_stream.hpp"
#include "host_memory_resource.hpp"
#include "test_support.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/mdspan.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace {

using namespace cudacore;
using test::expect_invalid;
using test::no_stream;

// A host buffer of `count` floats holding 0, 1, 2, ...
Buffer iota_buffer(const std::shared_ptr<test::HostMemoryResource>& resource, std::size_t count) {
    Buffer buffer = resource->allocate(count * sizeof(float), no_stream());
    auto* values = static_cast<float*>(buffer.data());
    for (std::size_t i = 0; i < count; ++i) values[i] = static_cast<float>(i);
    return buffer;
}

TEST(MdspanView, AStridedViewReadsThroughItsMdspan) {
    auto resource = std::make_shared<test::HostMemoryResource>();
    Buffer buffer = iota_buffer(resource, 8 * 16);
    // Every other column of rows 1..7 of an 8 x 16 matrix, from column 2.
    const StridedMemoryView view = StridedMemoryView::from_buffer(
        buffer, {.shape = {7, 6}, .strides = {16, 2}, .dtype = dlpack_dtype<float>(),
                 .byte_offset = (16 + 2) * sizeof(float)});
    const auto span = as_mdspan<float, 2>(view);
    ASSERT_EQ(span.extent(0), 7);
    ASSERT_EQ(span.extent(1), 6);
    EXPECT_EQ(span.stride(0), 16);
    EXPECT_EQ(span.stride(1), 2);
    for (std::int64_t r = 0; r < 7; ++r)
        for (std::int64_t c = 0; c < 6; ++c)
            ASSERT_EQ(span(r, c), static_cast<float>((1 + r) * 16 + 2 + 2 * c)) << r << ", " << c;
    span(0, 0) = -1.0f;  // writes land in the buffer
    EXPECT_EQ(static_cast<const float*>(buffer.data())[18], -1.0f);
}

TEST(MdspanView, MismatchesAndClosedViewsAreRefused) {
    auto resource = std::make_shared<test::HostMemoryResource>();
    Buffer buffer = iota_buffer(resource, 24);
    const StridedMemoryView view =
        StridedMemoryView::from_buffer(buffer, {.shape = {2, 3, 4}, .dtype = dlpack_dtype<float>()});
    expect_invalid([&] { as_mdspan<float, 2>(view); }, {"3 dimension(s), not 2"});
    expect_invalid([&] { as_mdspan<double, 3>(view); }, {"element type"});
    expect_invalid([&] { as_mdspan<std::int32_t, 3>(view); }, {"element type"});
    const StridedMemoryView read_only = StridedMemoryView::from_buffer(
        buffer, {.shape = {24}, .dtype = dlpack_dtype<float>()}, true);
    expect_invalid([&] { as_mdspan<float, 1>(read_only); }, {"read-only"});
    EXPECT_EQ((as_mdspan<const float, 1>(read_only)(23)), 23.0f);
    buffer.close();
    expect_invalid([&] { as_mdspan<float, 3>(view); }, {"as_mdspan"});
}

TEST(MdspanView, ViewsFromMdspansOfEachLayout) {
    auto resource = std::make_shared<test::HostMemoryResource>();
    Buffer buffer = iota_buffer(resource, 64);
    auto* data = static_cast<float*>(buffer.data());

    // Row-major 3 x 4 from element 8.
    cuda::std::mdspan<float, cuda::std::dextents<int, 2>> right(data + 8, 3, 4);
    const StridedMemoryView a = from_mdspan(buffer, right);
    EXPECT_EQ(a.shape(), (std::vector<std::int64_t>{3, 4}));
    EXPECT_EQ(a.strides(), (std::vector<std::int64_t>{4, 1}));
    EXPECT_EQ(a.layout().byte_offset, 8 * sizeof(float));
    EXPECT_TRUE(a.is_c_contiguous());
    EXPECT_FALSE(a.is_read_only());
    EXPECT_EQ((as_mdspan<float, 2>(a)(2, 3)), 8.0f + 2 * 4 + 3);

    // Column-major 4 x 5: element (i, j) at i + 4 j.
    cuda::std::mdspan<const float, cuda::std::dextents<std::size_t, 2>, cuda::std::layout_left>
        left(data, 4, 5);
    const StridedMemoryView b = from_mdspan(buffer, left);
    EXPECT_EQ(b.strides(), (std::vector<std::int64_t>{1, 4}));
    EXPECT_FALSE(b.is_c_contiguous());
    EXPECT_TRUE(b.is_read_only());
    EXPECT_EQ((as_mdspan<const float, 2>(b)(3, 4)), 3.0f + 4 * 4);

    // The round trip keeps extents and strides.
    const auto again = as_mdspan<float, 2>(a);
    const StridedMemoryView c = from_mdspan(buffer, again);
    EXPECT_EQ(c.shape(), a.shape());
    EXPECT_EQ(c.strides(), a.strides());
    EXPECT_EQ(c.data(), a.data());
}

TEST(MdspanView, MdspansOutsideTheBufferAreRefused) {
    auto resource = std::make_shared<test::HostMemoryResource>();
    Buffer buffer = iota_buffer(resource, 16);
    std::vector<float> elsewhere(16);
    cuda::std::mdspan<float, cuda::std::dextents<int, 1>> outside(elsewhere.data(), 16);
    expect_invalid([&] { from_mdspan(buffer, outside); }, {"not inside"});
    // Starts inside, ends past the end: from_buffer's fit check.
    cuda::std::mdspan<float, cuda::std::dextents<int, 1>> overhang(
        static_cast<float*>(buffer.data()) + 8, 16);
    EXPECT_THROW(from_mdspan(buffer, overhang), InvalidArgumentError);
    buffer.close();
    cuda::std::mdspan<float, cuda::std::dextents<int, 1>> stale(elsewhere.data(), 1);
    expect_invalid([&] { from_mdspan(buffer, stale); }, {"closed"});
}

}  // namespace
