// TensorMap on a real Hopper GPU: a TMA kernel copies tiles of a 2-D tensor through the map
// (passed to launch() as a kernel argument) and gets the right values, zeros past the edges;
// maps of every rank 1..5 encode and copy their boxes; replace_address re-points a map; a
// StridedMemoryView gives the same map as its layout (as_tensor_map).
#include "hopper_kernels.hpp"
#include "host_memory_resource.hpp"
#include "test_support.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/program.hpp"
#include "cudacore/strided_memory_view.hpp"
#include "cudacore/tensor_map.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
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

// cuda.core's StridedMemoryView.as_tensor_map: a row-major view (rows, cols) with a box in the
// view's order gives the map TensorMap::tiled gives for ({cols, rows}, box reversed).
TEST_F(TensorMapGpu, StridedMemoryViewGivesTheSameMap) {
    const StridedMemoryView view = StridedMemoryView::from_buffer(
        tensor_, {.shape = {height, width}, .dtype = {kDLFloat, 32, 1}});
    const TensorMap map = view.as_tensor_map({box_y, box_x});
    EXPECT_EQ(map.rank(), 2u);
    EXPECT_EQ(map.buffer(), tensor_);
    const std::vector<float> tile = read_tile(map, 32, 16);
    for (unsigned r = 0; r < box_y; ++r)
        for (unsigned c = 0; c < box_x; ++c)
            ASSERT_EQ(tile[r * box_x + c], static_cast<float>((16 + r) * 1000 + 32 + c))
                << "row " << r << ", column " << c;
}

// A view that starts inside its buffer (rows 8.. and columns 16..47 of the tensor, with the full
// row pitch as its stride): the map starts at the view's first element and holds the buffer.
TEST_F(TensorMapGpu, StridedMemoryViewAtAnOffset) {
    const StridedMemoryView view = StridedMemoryView::from_buffer(
        tensor_, {.shape = {height - 8, 32},
                  .strides = {width, 1},
                  .dtype = {kDLFloat, 32, 1},
                  .byte_offset = (8 * width + 16) * sizeof(float)});
    TensorMap map = view.as_tensor_map({box_y, box_x});
    Buffer held = map.buffer();
    EXPECT_EQ(held.handle(), tensor_.handle() + (8 * width + 16) * sizeof(float));
    const std::vector<float> tile = read_tile(map, 0, 0);
    for (unsigned r = 0; r < box_y; ++r)
        for (unsigned c = 0; c < box_x; ++c)
            ASSERT_EQ(tile[r * box_x + c], static_cast<float>((8 + r) * 1000 + 16 + c))
                << "row " << r << ", column " << c;
}

// One tiled float32 map of each rank: its shape and box, innermost first (box bytes <= 1 KiB).
// Every box origin the tests use is a multiple of 16 bytes in dimension 0: at ranks 4 and 5 a
// copy from an origin of 56 or 24 bytes faulted with CUDA_ERROR_ILLEGAL_INSTRUCTION on the H100
// (driver 580), through raw driver calls as through cudacore (tensor_map.hpp says so).
struct RankCase {
    std::vector<std::uint64_t> shape;
    std::vector<std::uint32_t> box;
};

std::vector<RankCase> rank_cases() {
    return {
        {{1024}, {128}},  // cuda.core's tma_tensor_map example: 1024 floats, tiles of 128
        {{64, 16}, {16, 8}},
        {{32, 8, 4}, {8, 4, 2}},
        {{16, 4, 4, 4}, {8, 2, 2, 2}},
        {{16, 4, 2, 2, 2}, {8, 2, 2, 2, 2}},
    };
}

class TensorMapRanks : public TensorMapGpu {
protected:
    void SetUp() override {
        TensorMapGpu::SetUp();
        if (IsSkipped()) return;
        ProgramOptions options;
        options.name = "tensor_map_rank_test";
        options.arch = device_->arch();
        rank_code_ = Program(test::tensor_map_rank_kernels, SourceType::cxx, options)
                         .compile(CodeType::cubin);
    }

    // A tensor of `shape` whose element at linear index i (dimension 0 fastest) holds i.
    Buffer iota(const std::vector<std::uint64_t>& shape) {
        std::uint64_t count = 1;
        for (std::uint64_t extent : shape) count *= extent;
        std::vector<float> values(count);
        for (std::uint64_t i = 0; i < count; ++i) values[i] = static_cast<float>(i);
        Buffer tensor = device_->allocate(count * sizeof(float), *stream_);
        tensor.copy_from(values, *stream_);
        return tensor;
    }

    // Copies the box at `origin` through `map` with the rank's kernel and checks every element:
    // the tensor's value, or zero where the box lies past the tensor.
    void expect_box(const TensorMap& map, const RankCase& rank_case,
                    const std::vector<int>& origin) {
        const std::size_t rank = rank_case.shape.size();
        unsigned elements = 1;
        for (std::uint32_t extent : rank_case.box) elements *= extent;
        Buffer out = device_->allocate(256 * sizeof(float), *stream_);
        out.fill_byte(0xff, *stream_);  // NaN everywhere: an element not written shows
        int c[5] = {0, 0, 0, 0, 0};
        for (std::size_t i = 0; i < rank; ++i) c[i] = origin[i];
        const std::string name = "load_box_" + std::to_string(rank) + "d";
        launch(*stream_, LaunchConfig{.grid = 1, .block = 128}, rank_code_->get_kernel(name), map,
               c[0], c[1], c[2], c[3], c[4], elements, out);
        std::vector<float> got(256);
        out.copy_to(got, *stream_);
        stream_->sync();
        for (unsigned i = 0; i < elements; ++i) {
            // The box index of element i (dimension 0 fastest), then its tensor coordinates.
            std::uint64_t rest = i, linear = 0, scale = 1;
            bool inside = true;
            for (std::size_t d = 0; d < rank; ++d) {
                const std::uint64_t at = c[d] + rest % rank_case.box[d];
                rest /= rank_case.box[d];
                inside = inside && at < rank_case.shape[d];
                linear += at * scale;
                scale *= rank_case.shape[d];
            }
            const float expected = inside ? static_cast<float>(linear) : 0.0f;
            ASSERT_EQ(got[i], expected) << "rank " << rank << ", box element " << i;
        }
    }

    std::optional<ObjectCode> rank_code_;
};

// The driver refuses a null globalStrides even for rank 1 (where it reads none): every rank
// encodes, and its kernel reads the last box inside the tensor, and a box hanging past
// dimension 0's end (zero filled there). One test per rank and box, so a fault (which ends the
// context) names them.
class TensorMapEachRank : public TensorMapRanks, public ::testing::WithParamInterface<int> {
protected:
    void copy_box(bool overhanging) {
        const RankCase rank_case = rank_cases()[GetParam() - 1];
        const std::size_t rank = rank_case.shape.size();
        Buffer tensor = iota(rank_case.shape);
        const TensorMap map = TensorMap::tiled(
            tensor, {.element_type = TensorDataType::float32, .shape = rank_case.shape,
                     .box = rank_case.box});
        EXPECT_EQ(map.rank(), rank);
        std::vector<int> origin(rank);
        for (std::size_t d = 0; d < rank; ++d) {
            origin[d] = overhanging ? (d == 0 ? static_cast<int>(rank_case.shape[0] -
                                                                 rank_case.box[0] / 2)
                                              : 0)
                                    : static_cast<int>(rank_case.shape[d] - rank_case.box[d]);
        }
        expect_box(map, rank_case, origin);
    }
};

TEST_P(TensorMapEachRank, CopiesTheLastBoxInside) { copy_box(false); }

TEST_P(TensorMapEachRank, CopiesABoxHangingPastTheEnd) { copy_box(true); }

INSTANTIATE_TEST_SUITE_P(Rank, TensorMapEachRank, ::testing::Values(1, 2, 3, 4, 5),
                         [](const ::testing::TestParamInfo<int>& info) {
                             return std::to_string(info.param) + "d";
                         });

// cuda.core's tma_tensor_map example: 1024 floats, tiles of 128, one block per tile.
TEST_F(TensorMapRanks, OneDimensionalMapCopiesEveryTile) {
    const RankCase one_d{{1024}, {128}};
    Buffer tensor = iota(one_d.shape);
    const TensorMap map = TensorMap::tiled(
        tensor, {.element_type = TensorDataType::float32, .shape = {1024}, .box = {128}});
    for (int tile = 0; tile < 8; ++tile) expect_box(map, one_d, {tile * 128});
}

TEST_F(TensorMapRanks, Im2colEncodesForRanks3To5) {
    const std::vector<std::vector<std::uint64_t>> shapes = {
        {16, 8, 8}, {16, 8, 8, 2}, {16, 8, 4, 4, 2}};
    for (const auto& shape : shapes) {
        std::uint64_t count = 1;
        for (std::uint64_t extent : shape) count *= extent;
        Buffer tensor = device_->allocate(count * sizeof(float), *stream_);
        const std::size_t spatial = shape.size() - 2;
        const TensorMap map = TensorMap::im2col(
            tensor, {.element_type = TensorDataType::float32, .shape = shape,
                     .lower_corner = std::vector<int>(spatial, 0),
                     .upper_corner = std::vector<int>(spatial, -1), .channels_per_pixel = 16,
                     .pixels_per_column = 8});
        EXPECT_EQ(map.rank(), shape.size());
    }
}

// cuda.core's tma_replace_address example: the same 1-D map re-pointed at a second tensor reads
// it; a copy of the map made before, and the map's old buffer, are untouched.
TEST_F(TensorMapRanks, ReplaceAddressReadsTheNewTensor) {
    const RankCase one_d{{1024}, {128}};
    Buffer first = iota(one_d.shape);
    TensorMap map = TensorMap::tiled(
        first, {.element_type = TensorDataType::float32, .shape = {1024}, .box = {128}});
    expect_box(map, one_d, {256});
    const TensorMap before = map;

    Buffer second = device_->allocate(1024 * sizeof(float), *stream_);
    second.fill_uint32(0x42280000u, *stream_);  // 42.0f
    map.replace_address(second);
    EXPECT_EQ(map.buffer(), second);
    EXPECT_EQ(before.buffer(), first);
    EXPECT_EQ(map.rank(), 1u);
    EXPECT_EQ(map.span_bytes(), 1024u * sizeof(float));
    for (int tile = 0; tile < 8; ++tile) {
        Buffer out = device_->allocate(256 * sizeof(float), *stream_);
        launch(*stream_, LaunchConfig{.grid = 1, .block = 128},
               rank_code_->get_kernel("load_box_1d"), map, tile * 128, 0, 0, 0, 0, 128u, out);
        std::vector<float> got(256);
        out.copy_to(got, *stream_);
        stream_->sync();
        for (int i = 0; i < 128; ++i) ASSERT_EQ(got[i], 42.0f) << "tile " << tile << ", " << i;
    }
    expect_box(before, one_d, {256});  // the copy still reads the first tensor
}

// The checks the encode makes on its buffer, before the driver; a refused buffer leaves the map
// as it was (cuda.core keeps the old tensor until the driver call succeeded).
TEST_F(TensorMapRanks, ReplaceAddressChecksTheBufferAndKeepsTheMapOnFailure) {
    const RankCase one_d{{1024}, {128}};
    Buffer first = iota(one_d.shape);
    TensorMap map = TensorMap::tiled(
        first, {.element_type = TensorDataType::float32, .shape = {1024}, .box = {128}});
    const auto refusal = [&](const Buffer& buffer) -> std::string {
        try {
            map.replace_address(buffer);
        } catch (const InvalidArgumentError& e) {
            return e.what();
        }
        ADD_FAILURE() << "replace_address accepted " << buffer.description();
        return "";
    };
    Buffer closed = device_->allocate(4096, *stream_);
    closed.close(*stream_);
    EXPECT_NE(refusal(closed).find("the buffer is closed"), std::string::npos);
    EXPECT_NE(refusal(Buffer()).find("the buffer is closed"), std::string::npos);

    Buffer larger = device_->allocate(4096 + 64, *stream_);
    Buffer shifted = Buffer::wrap_unowned(larger.handle() + 8, 4096);
    const std::string misaligned = refusal(shifted);
    EXPECT_NE(misaligned.find("TensorMap::replace_address"), std::string::npos) << misaligned;
    EXPECT_NE(misaligned.find("not aligned to 16 bytes"), std::string::npos) << misaligned;

    Buffer small = device_->allocate(2048, *stream_);
    const std::string too_small = refusal(small);
    EXPECT_NE(too_small.find("smaller than the 4096 bytes the tensor spans"), std::string::npos)
        << too_small;
    EXPECT_NE(too_small.find("rank 1 float32 tensor"), std::string::npos) << too_small;

    auto host = std::make_shared<test::HostMemoryResource>();
    Buffer host_only = host->allocate(4096, *stream_);
    EXPECT_NE(refusal(host_only).find("not device-accessible memory (test host memory)"),
              std::string::npos);

    EXPECT_EQ(map.buffer(), first);
    expect_box(map, one_d, {512});  // still the first tensor
}

}  // namespace
