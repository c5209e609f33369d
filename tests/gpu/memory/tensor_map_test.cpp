// TensorMap on a real Hopper GPU: a TMA kernel copies tiles of a 2-D tensor through the map
// (passed to launch() as a kernel argument) and gets the right values, zeros past the edges.
#include "hopper_kernels.hpp"
#include "test_support.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/program.hpp"
#include "cudacore/tensor_map.hpp"

#include <optional>
#include <vector>

namespace {

using namespace cudacore;

constexpr unsigned width = 64, height = 48;  // the tensor: value(row, col) = row * 1000 + col
constexpr unsigned box_x = 32, box_y = 16;   // the kernel's tile

class TensorMapGpu : public ::testing::Test {
protected:
    void SetUp() override {
        CUDACORE_REQUIRE_GPU();
        device_.emplace(0);
        if (device_->compute_capability().major < 9)
            GTEST_SKIP() << "tensor maps (TMA) need compute capability 9.0, device 0 is "
                         << device_->arch();
        stream_.emplace(device_->create_stream());
        ProgramOptions options;
        options.name = "tensor_map_test";
        options.arch = device_->arch();
        code_ = Program(test::tensor_map_kernels, SourceType::cxx, options).compile(CodeType::cubin);
        std::vector<float> values(width * height);
        for (unsigned row = 0; row < height; ++row)
            for (unsigned col = 0; col < width; ++col)
                values[row * width + col] = static_cast<float>(row * 1000 + col);
        tensor_ = device_->allocate(values.size() * sizeof(float), *stream_);
        tensor_.copy_from(values, *stream_);
        out_ = device_->allocate(box_x * box_y * sizeof(float), *stream_);
    }

    // The tile at (x, y) as the kernel read it through `map`.
    std::vector<float> read_tile(const TensorMap& map, int x, int y) {
        launch(*stream_, LaunchConfig{.grid = 1, .block = 128}, code_->get_kernel("load_tile"), map,
               x, y, out_);
        std::vector<float> tile(box_x * box_y);
        out_.copy_to(tile, *stream_);
        stream_->sync();
        return tile;
    }

    std::optional<Device> device_;
    std::optional<Stream> stream_;
    std::optional<ObjectCode> code_;
    Buffer tensor_;
    Buffer out_;
};

TEST_F(TensorMapGpu, TmaKernelReadsTheTile) {
    const TensorMap map = TensorMap::tiled(
        tensor_, {.element_type = TensorDataType::float32, .shape = {width, height},
                  .box = {box_x, box_y}});
    EXPECT_EQ(map.rank(), 2u);
    EXPECT_EQ(map.buffer().handle(), tensor_.handle());
    const std::vector<float> tile = read_tile(map, 32, 16);
    for (unsigned r = 0; r < box_y; ++r)
        for (unsigned c = 0; c < box_x; ++c)
            ASSERT_EQ(tile[r * box_x + c], static_cast<float>((16 + r) * 1000 + 32 + c))
                << "row " << r << ", column " << c;
}

TEST_F(TensorMapGpu, OutOfBoundsElementsReadAsZero) {
    const TensorMap map = TensorMap::tiled(
        tensor_, {.element_type = TensorDataType::float32, .shape = {width, height},
                  .box = {box_x, box_y}});
    const std::vector<float> tile = read_tile(map, 48, 40);  // past the right and bottom edges
    for (unsigned r = 0; r < box_y; ++r) {
        for (unsigned c = 0; c < box_x; ++c) {
            const unsigned row = 40 + r, col = 48 + c;
            const float expected =
                row < height && col < width ? static_cast<float>(row * 1000 + col) : 0.0f;
            ASSERT_EQ(tile[r * box_x + c], expected) << "row " << r << ", column " << c;
        }
    }
}

TEST_F(TensorMapGpu, StridedViewOfPaddedRows) {
    // The left 32 columns of each row, described with the full row pitch as the stride.
    const TensorMap map = TensorMap::tiled(
        tensor_, {.element_type = TensorDataType::float32, .shape = {32, height},
                  .strides = {width * sizeof(float)}, .box = {box_x, box_y}});
    const std::vector<float> tile = read_tile(map, 16, 0);  // columns 16..47: 32.. are outside
    for (unsigned r = 0; r < box_y; ++r)
        for (unsigned c = 0; c < box_x; ++c) {
            const unsigned col = 16 + c;
            const float expected = col < 32 ? static_cast<float>(r * 1000 + col) : 0.0f;
            ASSERT_EQ(tile[r * box_x + c], expected) << "row " << r << ", column " << c;
        }
}

TEST_F(TensorMapGpu, Im2colEncodes) {
    // NHWC-like 16 channels x 8 x 8 float tensor: the driver accepts the descriptor.
    Buffer nhwc = device_->allocate(16 * 8 * 8 * sizeof(float), *stream_);
    const TensorMap map = TensorMap::im2col(
        nhwc, {.element_type = TensorDataType::float32, .shape = {16, 8, 8},
               .lower_corner = {0}, .upper_corner = {-1}, .channels_per_pixel = 16,
               .pixels_per_column = 8});
    EXPECT_EQ(map.rank(), 3u);
}

}  // namespace
