// TensorMap's host-side checks: every rule is refused before the driver is called, with a message
// naming the field; valid options reach the driver (NoDriverError in a child with no driver).
#include "device_accessible_host_resource.hpp"
#include "empty_stream.hpp"
#include "hopper_kernels.hpp"
#include "host_memory_resource.hpp"
#include "test_support.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/program.hpp"
#include "cudacore/tensor_map.hpp"

#include <functional>
#include <memory>

namespace {

using namespace cudacore;

class TensorMapChecks : public ::testing::Test {
protected:
    // 64 x 64 float32, 16 KiB, 128-byte aligned.
    Buffer buffer() { return resource_->allocate(64 * 64 * 4, no_stream_); }
    static TensorMapOptions valid() {
        return {.element_type = TensorDataType::float32, .shape = {64, 64}, .box = {32, 16}};
    }
    static TensorMapIm2colOptions valid_im2col() {
        return {.element_type = TensorDataType::float32,
                .shape = {16, 16, 16},
                .lower_corner = {0},
                .upper_corner = {-1},
                .channels_per_pixel = 16,
                .pixels_per_column = 8};
    }
    // The InvalidArgumentError's message; fails the test when something else (or nothing) ends
    // the call: in particular NoDriverError, which would mean the driver was reached first.
    static std::string refusal(const std::function<void()>& call) {
        try {
            call();
        } catch (const InvalidArgumentError& e) {
            return e.what();
        } catch (const std::exception& e) {
            ADD_FAILURE() << "not an InvalidArgumentError: " << e.what();
            return "";
        }
        ADD_FAILURE() << "no error";
        return "";
    }
    std::string tiled(const TensorMapOptions& options) {
        Buffer b = buffer();
        return refusal([&] { TensorMap::tiled(b, options); });
    }
    std::string im2col(const TensorMapIm2colOptions& options) {
        Buffer b = buffer();
        return refusal([&] { TensorMap::im2col(b, options); });
    }

    Stream no_stream_ = test::no_stream();
    std::shared_ptr<test::DeviceAccessibleHostResource> resource_ =
        std::make_shared<test::DeviceAccessibleHostResource>();
};

#define EXPECT_MENTIONS(message, text) \
    EXPECT_NE((message).find(text), std::string::npos) << "message: " << (message)

TEST_F(TensorMapChecks, ElementTypes) {
    EXPECT_EQ(element_size(TensorDataType::uint8), 1u);
    EXPECT_EQ(element_size(TensorDataType::bfloat16), 2u);
    EXPECT_EQ(element_size(TensorDataType::tfloat32), 4u);
    EXPECT_EQ(element_size(TensorDataType::float64), 8u);
    EXPECT_EQ(to_string(TensorDataType::float16), "float16");
    EXPECT_THROW(element_size(static_cast<TensorDataType>(99)), InvalidArgumentError);
    auto options = valid();
    options.element_type = static_cast<TensorDataType>(99);
    EXPECT_MENTIONS(tiled(options), "TensorMapOptions::element_type is not a TensorDataType");
}

TEST_F(TensorMapChecks, Buffer) {
    Buffer closed = buffer();
    closed.close();
    EXPECT_MENTIONS(refusal([&] { TensorMap::tiled(closed, valid()); }),
                    "TensorMapOptions::buffer is closed");
    Buffer whole = buffer();
    Buffer shifted = Buffer::wrap_unowned(whole.handle() + 8, 4096, resource_);
    const std::string message = refusal([&] {
        TensorMap::tiled(shifted, {.shape = {16, 16}, .box = {16, 16}});
    });
    EXPECT_MENTIONS(message, "TensorMap::tiled");
    EXPECT_MENTIONS(message, "TensorMapOptions::buffer address is not aligned to 16 bytes");
    // 32-byte interleave wants 32-byte alignment.
    Buffer at16 = Buffer::wrap_unowned(whole.handle() + 16, 8192, resource_);
    EXPECT_MENTIONS(refusal([&] {
                        TensorMap::tiled(at16, {.shape = {8, 8, 8},
                                                .box = {8, 8, 8},
                                                .interleave = TensorMapInterleave::bytes32,
                                                .swizzle = TensorMapSwizzle::bytes32});
                    }),
                    "aligned to 32 bytes");
    auto host = std::make_shared<test::HostMemoryResource>();
    Buffer host_only = host->allocate(64 * 64 * 4, no_stream_);
    EXPECT_MENTIONS(refusal([&] { TensorMap::tiled(host_only, valid()); }),
                    "buffer is not device-accessible memory (test host memory)");
}

TEST_F(TensorMapChecks, Rank) {
    auto options = valid();
    options.shape = {};
    options.box = {};
    EXPECT_MENTIONS(tiled(options), "shape has 0 dimension(s); the rank must be 1 to 5");
    options.shape = {2, 2, 2, 2, 2, 2};
    options.box = {2, 2, 2, 2, 2, 2};
    EXPECT_MENTIONS(tiled(options), "shape has 6 dimension(s)");
    options = valid();
    options.interleave = TensorMapInterleave::bytes16;
    EXPECT_MENTIONS(tiled(options), "the rank must be 3 to 5 with interleave");
}

// Rank 1 (cuda.core's tma_tensor_map example): no strides, the same checks on shape and box.
TEST_F(TensorMapChecks, RankOne) {
    TensorMapOptions options{.element_type = TensorDataType::float32, .shape = {1024},
                             .box = {128}};
    options.strides = {4096};
    EXPECT_MENTIONS(tiled(options), "TensorMapOptions::strides has 1 value(s); it needs 0");
    options.strides = {};
    options.shape = {4097};  // one float past the 16 KiB buffer
    EXPECT_MENTIONS(tiled(options), "spans 16388 bytes, more than the buffer's 16384");
    options.shape = {1024};
    options.box = {3};
    EXPECT_MENTIONS(tiled(options), "box[0] spans 12 bytes");
    options.box = {128, 1};
    EXPECT_MENTIONS(tiled(options), "TensorMapOptions::box has 2 value(s); it needs 1");
    options.box = {257};
    EXPECT_MENTIONS(tiled(options), "box[0] is 257; it must be 1 to 256");
}

TEST_F(TensorMapChecks, Shape) {
    auto options = valid();
    options.shape = {64, 0};
    EXPECT_MENTIONS(tiled(options), "TensorMapOptions::shape[1] is 0; it must be 1 to 2^32");
    options.shape = {64, 65};  // one row past the buffer
    EXPECT_MENTIONS(tiled(options), "spans 16640 bytes, more than the buffer's 16384");
}

TEST_F(TensorMapChecks, Strides) {
    auto options = valid();
    options.strides = {256, 256};
    EXPECT_MENTIONS(tiled(options), "TensorMapOptions::strides has 2 value(s); it needs 1");
    options.strides = {264};
    EXPECT_MENTIONS(tiled(options), "strides[0] is 264 bytes, not a multiple of 16");
    options.strides = {128};  // rows of 64 floats are 256 bytes: they would overlap
    EXPECT_MENTIONS(tiled(options), "strides[0] is 128 bytes, less than the 256 bytes");
    options.strides = {1ull << 40};
    EXPECT_MENTIONS(tiled(options), "it must be below 2^40");
    options = valid();
    options.shape = {8, 4, 4};
    options.box = {8, 4, 4};
    options.strides = {32, 64};  // dimension 2 must skip 4 rows of 32 bytes
    EXPECT_MENTIONS(tiled(options), "strides[1] is 64 bytes, less than the 128 bytes of dimension 1");
    options.shape = {12, 4};  // packed rows of 48 bytes are fine; 12 bytes (3 floats) are not
    options.box = {4, 4};
    options.strides = {};
    options.shape = {3, 4};
    EXPECT_MENTIONS(tiled(options), "strides[0] is 12 bytes, not a multiple of 16 (the packed");
    options.shape = {64, 64};
    options.interleave = TensorMapInterleave::bytes32;
    options.swizzle = TensorMapSwizzle::bytes32;
    options.shape = {8, 8, 8};
    options.box = {8, 8, 8};
    options.strides = {48, 384};
    EXPECT_MENTIONS(tiled(options), "strides[0] is 48 bytes, not a multiple of 32");
}

TEST_F(TensorMapChecks, Box) {
    auto options = valid();
    options.box = {32};
    EXPECT_MENTIONS(tiled(options), "TensorMapOptions::box has 1 value(s); it needs 2");
    options.box = {32, 0};
    EXPECT_MENTIONS(tiled(options), "box[1] is 0; it must be 1 to 256");
    options.box = {32, 257};
    EXPECT_MENTIONS(tiled(options), "box[1] is 257; it must be 1 to 256");
    options.box = {3, 16};
    EXPECT_MENTIONS(tiled(options),
                    "box[0] spans 12 bytes; the inner box must be a multiple of 16 bytes");
}

TEST_F(TensorMapChecks, SwizzleSpan) {
    auto options = valid();
    options.box = {64, 8};  // 256 bytes
    options.swizzle = TensorMapSwizzle::bytes128;
    EXPECT_MENTIONS(tiled(options), "box[0] spans 256 bytes, more than the 128-byte swizzle span");
    options.box = {16, 8};  // 64 bytes
    options.swizzle = TensorMapSwizzle::bytes32;
    EXPECT_MENTIONS(tiled(options), "more than the 32-byte swizzle span");
    options.swizzle = static_cast<TensorMapSwizzle>(7);
    EXPECT_MENTIONS(tiled(options), "swizzle is not a TensorMapSwizzle");
}

TEST_F(TensorMapChecks, InterleaveSwizzleAndFill) {
    auto options = valid();
    options.shape = {8, 8, 8};
    options.box = {8, 8, 8};
    options.interleave = TensorMapInterleave::bytes32;
    options.swizzle = TensorMapSwizzle::bytes128;
    EXPECT_MENTIONS(tiled(options), "swizzle must be bytes32 when interleave is bytes32");
    options = valid();
    options.interleave = static_cast<TensorMapInterleave>(5);
    EXPECT_MENTIONS(tiled(options), "interleave is not a TensorMapInterleave");
    options = valid();
    options.l2_promotion = static_cast<TensorMapL2Promotion>(9);
    EXPECT_MENTIONS(tiled(options), "l2_promotion is not a TensorMapL2Promotion");
    options = valid();
    options.element_type = TensorDataType::int32;
    options.oob_fill = TensorMapOobFill::nan_request_zero_fma;
    EXPECT_MENTIONS(tiled(options), "oob_fill is nan_request_zero_fma, which needs a floating "
                                    "point element_type, not int32");
}

TEST_F(TensorMapChecks, ElementStrides) {
    auto options = valid();
    options.element_strides = {1};
    EXPECT_MENTIONS(tiled(options), "element_strides has 1 value(s); it needs 2");
    options.element_strides = {1, 9};
    EXPECT_MENTIONS(tiled(options), "element_strides[1] is 9; it must be 1 to 8");
    options.element_strides = {0, 1};
    EXPECT_MENTIONS(tiled(options), "element_strides[0] is 0");
}

TEST_F(TensorMapChecks, Im2col) {
    auto options = valid_im2col();
    options.shape = {64, 64};
    EXPECT_MENTIONS(im2col(options),
                    "TensorMapIm2colOptions::shape has 2 dimension(s); the rank must be 3 to 5");
    options = valid_im2col();
    options.lower_corner = {0, 0};
    EXPECT_MENTIONS(im2col(options), "lower_corner has 2 value(s); it needs 1 (rank - 2)");
    options = valid_im2col();
    options.shape = {4, 8, 8, 8};
    options.lower_corner = {0, 128};
    options.upper_corner = {0, 0};
    EXPECT_MENTIONS(im2col(options),
                    "lower_corner[1] is 128; for rank 4 it must be within [-128, 127]");
    options = valid_im2col();
    options.upper_corner = {-40000};
    EXPECT_MENTIONS(im2col(options), "upper_corner[0] is -40000");
    options = valid_im2col();
    options.channels_per_pixel = 0;
    EXPECT_MENTIONS(im2col(options), "channels_per_pixel is 0; it must be 1 to 256");
    options = valid_im2col();
    options.pixels_per_column = 2000;
    EXPECT_MENTIONS(im2col(options), "pixels_per_column is 2000; it must be 1 to 1024");
    options = valid_im2col();
    options.swizzle = TensorMapSwizzle::bytes32;  // 16 float channels are 64 bytes
    EXPECT_MENTIONS(im2col(options),
                    "channels_per_pixel spans 64 bytes, more than the 32-byte swizzle span");
}

// A TensorMap reaches a kernel as a 128-byte, 128-byte aligned CUtensorMap passed by value.
TEST(TensorMapArgument, PassedAsItsDescriptor) {
    using Converted = detail::converted_argument_t<TensorMap>;
    static_assert(std::is_same_v<Converted, CUtensorMap>);
    static_assert(sizeof(Converted) == 128 && alignof(Converted) == 128);
    static_assert(std::is_same_v<decltype(KernelArgument<TensorMap>::convert(
                                     std::declval<const TensorMap&>())),
                                 const CUtensorMap&>);
    SUCCEED();
}

// The GPU tests' kernels (inline PTX: %smid, %globaltimer, mbarrier, bulk tensor copy) build for
// sm_90 with NVRTC and ptxas, so a syntax error shows here rather than on the GPU machine.
TEST(HopperKernels, CompileForSm90) {
    ProgramOptions options;
    options.arch = "sm_90";
    for (const char* source : {test::tensor_map_kernels, test::green_context_kernels,
                               test::tensor_map_rank_kernels}) {
        options.name = source == test::tensor_map_kernels      ? "tensor_map_kernels"
                       : source == test::tensor_map_rank_kernels ? "tensor_map_rank_kernels"
                                                                 : "green_context_kernels";
        const ObjectCode code = Program(source, SourceType::cxx, options).compile(CodeType::cubin);
        EXPECT_GT(code.size(), 0u) << options.name;
    }
}

TEST(TensorMapNoDriver, ValidOptionsReachTheDriver) {
    auto result = test::run_process({test::helper_path("hopper_no_driver_probe").string()},
                                    {{"CUDACORE_LIBCUDA_PATH", "/nonexistent/libcuda.so.1"}});
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    for (const char* entry : {"TensorMap::tiled", "TensorMap::tiled rank 1",
                              "TensorMap::tiled rank 5", "TensorMap::im2col"})
        EXPECT_NE(result.out.find(std::string(entry) + ": NoDriverError"), std::string::npos)
            << entry << "\n" << result.out;
    EXPECT_EQ(result.out.find("UNEXPECTED"), std::string::npos) << result.out;
}

}  // namespace
