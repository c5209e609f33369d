// StridedMemoryView without a GPU: layouts from a Buffer and from DLPack tensors (host memory of
// a test resource and a fake producer), what a view does once its owner closed, the round trip
// back to DLPack, and as_tensor_map's refusals made before the driver.
#include "device_accessible_host_resource.hpp"
#include "empty_stream.hpp"
#include "host_memory_resource.hpp"
#include "test_support.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/strided_memory_view.hpp"

#include <cstdint>
#include <memory>
#include <numeric>
#include <optional>
#include <vector>

namespace {

using namespace cudacore;
using test::expect_invalid;
using test::no_stream;

constexpr DLDataType float32{kDLFloat, 32, 1};

TEST(StridedMemoryView, FromBufferFillsInRowMajorStrides) {
    auto resource = std::make_shared<test::HostMemoryResource>();
    Buffer buffer = resource->allocate(2 * 3 * 4 * sizeof(float), no_stream());
    const StridedMemoryView view =
        StridedMemoryView::from_buffer(buffer, {.shape = {2, 3, 4}, .dtype = float32});
    EXPECT_EQ(view.ndim(), 3);
    EXPECT_EQ(view.shape(), (std::vector<std::int64_t>{2, 3, 4}));
    EXPECT_EQ(view.strides(), (std::vector<std::int64_t>{12, 4, 1}));
    EXPECT_TRUE(view.is_c_contiguous());
    EXPECT_EQ(view.size(), 24u);
    EXPECT_EQ(view.element_bytes(), 4u);
    EXPECT_EQ(view.data(), buffer.data());
    EXPECT_FALSE(view.is_read_only());
    EXPECT_FALSE(view.is_closed());
    EXPECT_EQ(view.device_ordinal(), 0);
    EXPECT_FALSE(view.is_device_accessible());
    EXPECT_EQ(view.dl_device().device_type, kDLCPU);
    EXPECT_EQ(view.buffer(), buffer);
}

TEST(StridedMemoryView, ExplicitStridesOffsetAndReadOnly) {
    auto resource = std::make_shared<test::HostMemoryResource>();
    Buffer buffer = resource->allocate(8 * 16 * sizeof(float), no_stream());
    // Every other column of rows 1..7 of an 8 x 16 matrix, starting at column 2.
    const StridedMemoryView view = StridedMemoryView::from_buffer(
        buffer,
        {.shape = {7, 6}, .strides = {16, 2}, .dtype = float32, .byte_offset = (16 + 2) * 4},
        true);
    EXPECT_EQ(view.strides(), (std::vector<std::int64_t>{16, 2}));
    EXPECT_FALSE(view.is_c_contiguous());
    EXPECT_TRUE(view.is_read_only());
    EXPECT_EQ(static_cast<char*>(view.data()) - static_cast<char*>(buffer.data()), 72);
    // A dimension of extent 1 may have any stride and still be contiguous.
    const StridedMemoryView row = StridedMemoryView::from_buffer(
        buffer, {.shape = {1, 16}, .strides = {999, 1}, .dtype = float32});
    EXPECT_TRUE(row.is_c_contiguous());
}

TEST(StridedMemoryView, LayoutsThatDoNotFitAreRefused) {
    auto resource = std::make_shared<test::HostMemoryResource>();
    Buffer buffer = resource->allocate(64, no_stream());
    expect_invalid(
        [&] { StridedMemoryView::from_buffer(buffer, {.shape = {17}, .dtype = float32}); },
        {"StridedMemoryView::from_buffer", "spans 68 bytes", "64 bytes"});
    expect_invalid(
        [&] {
            StridedMemoryView::from_buffer(buffer,
                                           {.shape = {4}, .dtype = float32, .byte_offset = 52});
        },
        {"byte_offset 52", "spans 16 bytes"});
    expect_invalid(
        [&] { StridedMemoryView::from_buffer(buffer, {.shape = {2, 2}, .strides = {2}}); },
        {"1 strides for 2 dimensions"});
    expect_invalid([&] { StridedMemoryView::from_buffer(buffer, {.shape = {-1}}); },
                   {"StridedMemoryView::from_buffer", "negative"});
    expect_invalid(
        [&] { StridedMemoryView::from_buffer(buffer, {.shape = {2}, .dtype = {kDLInt, 4, 1}}); },
        {"whole number of bytes"});
    buffer.close();
    expect_invalid([&] { StridedMemoryView::from_buffer(buffer, {.shape = {4}}); },
                   {"is closed"});
}

// The view holds its Buffer, and Buffer::close closes every copy: the view finds itself closed
// instead of pointing at freed memory.
TEST(StridedMemoryView, AfterTheOwnerClosesTheViewIsClosed) {
    auto resource = std::make_shared<test::HostMemoryResource>();
    Buffer buffer = resource->allocate(64, no_stream());
    const StridedMemoryView view =
        StridedMemoryView::from_buffer(buffer, {.shape = {16}, .dtype = float32});
    buffer.close();
    EXPECT_EQ(resource->frees.load(), 1);  // freed now, as close() says
    EXPECT_TRUE(view.is_closed());
    EXPECT_EQ(view.data(), nullptr);
    expect_invalid([&] { view.to_dlpack(); }, {"StridedMemoryView::to_dlpack", "closed"});
    expect_invalid([&] { view.as_tensor_map({16}); }, {"StridedMemoryView::as_tensor_map"});
    expect_invalid([&] { KernelArgument<StridedMemoryView>::convert(view); },
                   {"launch", "strided memory view of shape [16] is closed"});
    EXPECT_TRUE(StridedMemoryView().is_closed());
}

// The view keeps the memory while it lives: dropping the owner's Buffer frees nothing.
TEST(StridedMemoryView, KeepsTheMemoryAfterTheOwnerIsDropped) {
    auto resource = std::make_shared<test::HostMemoryResource>();
    std::optional<StridedMemoryView> view;
    {
        Buffer buffer = resource->allocate(64, no_stream());
        view = StridedMemoryView::from_buffer(buffer, {.shape = {16}, .dtype = float32});
    }
    EXPECT_EQ(resource->frees.load(), 0);
    EXPECT_FALSE(view->is_closed());
    view.reset();
    EXPECT_EQ(resource->frees.load(), 1);
}

struct Producer {
    std::vector<float> storage = std::vector<float>(64);
    std::int64_t shape[2] = {4, 8};
    std::int64_t strides[2] = {16, 2};
    int deleted = 0;
    DLManagedTensor tensor{};

    explicit Producer(bool with_strides) {
        std::iota(storage.begin(), storage.end(), 0.0f);
        tensor.dl_tensor.data = storage.data();
        tensor.dl_tensor.device = {kDLCPU, 0};
        tensor.dl_tensor.ndim = 2;
        tensor.dl_tensor.dtype = float32;
        tensor.dl_tensor.shape = shape;
        tensor.dl_tensor.strides = with_strides ? strides : nullptr;
        tensor.dl_tensor.byte_offset = 4;
        tensor.manager_ctx = this;
        tensor.deleter = [](DLManagedTensor* self) {
            ++static_cast<Producer*>(self->manager_ctx)->deleted;
        };
    }
};

TEST(StridedMemoryView, FromDLPackKeepsTheLayoutAndTheProducer) {
    Producer producer(true);
    {
        const StridedMemoryView view = StridedMemoryView::from_dlpack(&producer.tensor);
        EXPECT_EQ(view.shape(), (std::vector<std::int64_t>{4, 8}));
        EXPECT_EQ(view.strides(), (std::vector<std::int64_t>{16, 2}));
        EXPECT_EQ(view.data(), producer.storage.data() + 1);  // byte_offset 4
        EXPECT_EQ(static_cast<const float*>(view.data())[view.strides()[0] * 2 + 2 * 3], 39.0f);
        EXPECT_FALSE(view.is_read_only());
        EXPECT_EQ(view.dl_device().device_type, kDLCPU);
        const StridedMemoryView copy = view;
        EXPECT_EQ(producer.deleted, 0);
    }
    EXPECT_EQ(producer.deleted, 1);
    Producer compact(false);
    const StridedMemoryView view = StridedMemoryView::from_dlpack(&compact.tensor);
    EXPECT_EQ(view.strides(), (std::vector<std::int64_t>{8, 1}));
    EXPECT_TRUE(view.is_c_contiguous());
    expect_invalid([] { StridedMemoryView::from_dlpack(nullptr); }, {"null tensor"});
}

TEST(StridedMemoryView, BackToDLPack) {
    auto resource = std::make_shared<test::HostMemoryResource>();
    Buffer buffer = resource->allocate(8 * 16 * sizeof(float), no_stream());
    const StridedMemoryView view = StridedMemoryView::from_buffer(
        buffer, {.shape = {7, 6}, .strides = {16, 2}, .dtype = float32, .byte_offset = 72});
    DLManagedTensor* tensor = view.to_dlpack();
    ASSERT_NE(tensor, nullptr);
    EXPECT_EQ(tensor->dl_tensor.ndim, 2);
    EXPECT_EQ(tensor->dl_tensor.shape[0], 7);
    EXPECT_EQ(tensor->dl_tensor.strides[1], 2);
    EXPECT_EQ(static_cast<char*>(tensor->dl_tensor.data) + tensor->dl_tensor.byte_offset,
              view.data());
    // And in again: the same view of the same memory.
    const StridedMemoryView again = StridedMemoryView::from_dlpack(tensor);
    EXPECT_EQ(again.data(), view.data());
    EXPECT_EQ(again.shape(), view.shape());
    EXPECT_EQ(again.strides(), view.strides());
    EXPECT_EQ(again.dtype().code, kDLFloat);
}

TEST(StridedMemoryView, TensorDataTypes) {
    EXPECT_EQ(tensor_data_type({kDLFloat, 32, 1}), TensorDataType::float32);
    EXPECT_EQ(tensor_data_type({kDLFloat, 16, 1}), TensorDataType::float16);
    EXPECT_EQ(tensor_data_type({kDLBfloat, 16, 1}), TensorDataType::bfloat16);
    EXPECT_EQ(tensor_data_type({kDLUInt, 8, 1}), TensorDataType::uint8);
    EXPECT_EQ(tensor_data_type({kDLInt, 64, 1}), TensorDataType::int64);
    EXPECT_FALSE(tensor_data_type({kDLInt, 8, 1}));     // TMA has no int8
    EXPECT_FALSE(tensor_data_type({kDLFloat, 32, 4}));  // vector lanes
}

// as_tensor_map's own checks come before the driver (no NoDriverError, no DriverError).
TEST(StridedMemoryView, TensorMapRefusalsBeforeTheDriver) {
    auto resource = std::make_shared<test::DeviceAccessibleHostResource>();
    Buffer buffer = resource->allocate(64 * 64 * sizeof(float), no_stream());
    const StridedMemoryView matrix =
        StridedMemoryView::from_buffer(buffer, {.shape = {64, 64}, .dtype = float32});
    expect_invalid([&] { matrix.as_tensor_map({16}); },
                   {"box has 1 value(s); the view has 2 dimensions"});
    expect_invalid([&] { matrix.as_tensor_map({.box = {16, 16}, .element_strides = {1}}); },
                   {"element_strides has 1 value(s)"});
    expect_invalid(
        [&] {
            matrix.as_tensor_map({.box = {16, 16}, .element_type = TensorDataType::float64});
        },
        {"element_type float64 is 8 bytes, the view's elements 4"});
    const StridedMemoryView transposed = StridedMemoryView::from_buffer(
        buffer, {.shape = {64, 64}, .strides = {1, 64}, .dtype = float32});
    expect_invalid([&] { transposed.as_tensor_map({16, 16}); },
                   {"innermost dimension (1) has stride 64", "contiguous (stride 1)"});
    const StridedMemoryView bytes = StridedMemoryView::from_buffer(
        buffer, {.shape = {64}, .dtype = {kDLInt, 8, 1}});
    expect_invalid([&] { bytes.as_tensor_map({16}); },
                   {"int8", "TMA has no element type for it"});
    const StridedMemoryView six = StridedMemoryView::from_buffer(
        buffer, {.shape = {2, 2, 2, 2, 2, 2}, .dtype = float32});
    expect_invalid([&] { six.as_tensor_map({2, 2, 2, 2, 2, 2}); },
                   {"the view has 6 dimensions; a tensor map takes 1 to 5"});
    // The layout reaches TensorMap::tiled's checks in the driver's order: 4-byte rows of 3 floats
    // (innermost first) are not a multiple of 16.
    const StridedMemoryView narrow = StridedMemoryView::from_buffer(
        buffer, {.shape = {4, 3}, .dtype = float32});
    expect_invalid([&] { narrow.as_tensor_map({4, 4}); },
                   {"TensorMap::tiled", "strides[0] is 12 bytes, not a multiple of 16"});
}

}  // namespace
