// CUDA arrays, textures and surfaces on a GPU: a linearly filtered fetch at normalized
// coordinates matches a CPU reference; a surface written by one kernel is read by another; each
// mipmap level's view holds its own data (copies and a level-of-detail fetch); 2D and 3D copies
// with pitch round-trip (also through the deprecated stream-first forms); layered and cubemap
// arrays read back per layer and face; textures over linear and pitched memory; the limits and
// bad combinations refused; and a texture dropped right after its launch is released after the
// kernel, without a warning.
#include "test_support.hpp"

#include "cudacore/array_copy.hpp"
#include "cudacore/buffer.hpp"
#include "cudacore/cuda_array.hpp"
#include "cudacore/device.hpp"
#include "cudacore/device_properties.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/mipmapped_array.hpp"
#include "cudacore/program.hpp"
#include "cudacore/surface.hpp"
#include "cudacore/texture.hpp"
#include "runtime/release/release.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace {

using namespace cudacore;

constexpr const char* kernels = R"(
extern "C" __global__ void sample_2d(cudaTextureObject_t tex, const float* u, const float* v,
                                     float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<float>(tex, u[i], v[i]);
}
extern "C" __global__ void sample_2d_lod(cudaTextureObject_t tex, float u, float v, float level,
                                         float* out) {
    out[0] = tex2DLod<float>(tex, u, v, level);
}
extern "C" __global__ void sample_layered(cudaTextureObject_t tex, int width, int height,
                                          int layers, float* out) {
    int x = threadIdx.x, y = blockIdx.x, layer = blockIdx.y;
    if (x < width && y < height && layer < layers)
        out[(layer * height + y) * width + x] = tex2DLayered<float>(tex, x + 0.5f, y + 0.5f, layer);
}
__device__ void face_direction(int face, float& x, float& y, float& z) {
    x = face == 0 ? 1.f : face == 1 ? -1.f : 0.f;
    y = face == 2 ? 1.f : face == 3 ? -1.f : 0.f;
    z = face == 4 ? 1.f : face == 5 ? -1.f : 0.f;
}
extern "C" __global__ void sample_cubemap(cudaTextureObject_t tex, float* out) {
    float x, y, z;
    face_direction(threadIdx.x, x, y, z);
    out[threadIdx.x] = texCubemap<float>(tex, x, y, z);
}
extern "C" __global__ void sample_cubemap_layered(cudaTextureObject_t tex, float* out) {
    float x, y, z;
    face_direction(threadIdx.x, x, y, z);
    out[blockIdx.x * 6 + threadIdx.x] = texCubemapLayered<float>(tex, x, y, z, blockIdx.x);
}
extern "C" __global__ void fetch_linear(cudaTextureObject_t tex, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<float>(tex, i);
}
extern "C" __global__ void sample_pitch2d(cudaTextureObject_t tex, int width, int height, float* out) {
    int x = threadIdx.x, y = blockIdx.x;
    if (x < width && y < height) out[y * width + x] = tex2D<float>(tex, x + 0.5f, y + 0.5f);
}
extern "C" __global__ void write_surface(cudaSurfaceObject_t surface, int width, int height) {
    int x = threadIdx.x, y = blockIdx.x;
    if (x < width && y < height) surf2Dwrite(0.5f * (y * 1000 + x), surface, x * 4, y);
}
extern "C" __global__ void read_surface(cudaSurfaceObject_t surface, int width, int height,
                                        float* out) {
    int x = threadIdx.x, y = blockIdx.x;
    if (x < width && y < height) {
        float value;
        surf2Dread(&value, surface, x * 4, y);
        out[y * width + x] = value + 1.0f;
    }
}
)";

class TextureGpu : public ::testing::Test {
protected:
    void SetUp() override {
        CUDACORE_REQUIRE_GPU();
        device_.emplace(0);
        stream_.emplace(device_->create_stream());
        ProgramOptions options;
        options.name = "texture_test";
        options.arch = device_->arch();
        code_ = Program(kernels, SourceType::cxx, options).compile(CodeType::cubin);
    }

    Kernel kernel(const char* name) { return code_->get_kernel(name); }

    template <class T>
    Buffer upload(const std::vector<T>& values) {
        Buffer buffer = device_->allocate(values.size() * sizeof(T), *stream_);
        buffer.copy_from(values, *stream_);
        return buffer;
    }
    template <class T>
    std::vector<T> download(const Buffer& buffer) {
        std::vector<T> values(buffer.size() / sizeof(T));
        buffer.copy_to(values, *stream_);
        stream_->sync();
        return values;
    }

    std::optional<Device> device_;
    std::optional<Stream> stream_;
    std::optional<ObjectCode> code_;
};

// ---- texture fetch with linear filtering at normalized coordinates

float image_value(int x, int y) { return 10.0f * std::sin(0.7f * x) + 0.25f * y * y; }

// What the texture unit computes for a clamped bilinear fetch at normalized (u, v): texel
// centres at i + 0.5, weights from the fractional part.
float bilinear_reference(const std::vector<float>& image, int width, int height, float u, float v,
                         float& spread) {
    const double x = double(u) * width - 0.5, y = double(v) * height - 0.5;
    const double x0 = std::floor(x), y0 = std::floor(y);
    const double a = x - x0, b = y - y0;
    auto at = [&](double xi, double yi) {
        const int cx = std::clamp(static_cast<int>(xi), 0, width - 1);
        const int cy = std::clamp(static_cast<int>(yi), 0, height - 1);
        return double(image[cy * width + cx]);
    };
    const double t00 = at(x0, y0), t10 = at(x0 + 1, y0), t01 = at(x0, y0 + 1), t11 = at(x0 + 1, y0 + 1);
    spread = static_cast<float>(std::max({t00, t10, t01, t11}) - std::min({t00, t10, t01, t11}));
    return static_cast<float>((1 - a) * (1 - b) * t00 + a * (1 - b) * t10 + (1 - a) * b * t01 +
                              a * b * t11);
}

TEST_F(TextureGpu, LinearFilteringAtNormalizedCoordinatesMatchesTheCpu) {
    constexpr int width = 16, height = 8;
    std::vector<float> image(width * height);
    for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x) image[y * width + x] = image_value(x, y);
    const CudaArray array = CudaArray::create(*device_, {.format = ArrayFormat::float32,
                                                         .width = width, .height = height});
    copy_to_array(array, image.data(), image.size() * sizeof(float), *stream_);
    const TextureObject texture = TextureObject::from_array(
        array, {.address_modes = {TextureAddressMode::clamp, TextureAddressMode::clamp},
                .filter = TextureFilterMode::linear,
                .normalized_coordinates = true});

    // Fractions of a quarter (exact in the texture unit's 8-bit weights), the edges (clamped),
    // and uneven points (compared within the weights' precision).
    std::vector<float> u, v;
    for (int i = 0; i < 4 * width; ++i)
        for (int j = 0; j < 4 * height; j += 3) {
            u.push_back((i * 0.25f + 0.125f) / width);
            v.push_back((j * 0.25f + 0.375f) / height);
        }
    for (float edge : {0.0f, 1.0f}) {
        u.push_back(edge);
        v.push_back(0.5f);
        u.push_back(0.5f);
        v.push_back(edge);
    }
    for (int i = 0; i < 64; ++i) {
        u.push_back(std::fmod(0.6180339f * i, 1.0f));
        v.push_back(std::fmod(0.4142135f * i + 0.1f, 1.0f));
    }
    const int n = static_cast<int>(u.size());
    const Buffer u_buffer = upload(u), v_buffer = upload(v);
    const Buffer out = device_->allocate(n * sizeof(float), *stream_);
    launch(*stream_, LaunchConfig{.grid = (n + 127) / 128, .block = 128}, kernel("sample_2d"),
           texture, u_buffer, v_buffer, out, n);
    const std::vector<float> fetched = download<float>(out);
    for (int i = 0; i < n; ++i) {
        float spread = 0;
        const float expected = bilinear_reference(image, width, height, u[i], v[i], spread);
        // The hardware's weights have 8 fractional bits: an error of up to 1/256 of the spread.
        const float tolerance = spread / 256.0f + 1e-4f * (1.0f + std::fabs(expected));
        EXPECT_NEAR(fetched[i], expected, tolerance) << "at u " << u[i] << ", v " << v[i];
    }
}

// ---- surfaces

TEST_F(TextureGpu, SurfaceWrittenByOneKernelIsReadByAnother) {
    constexpr int width = 32, height = 16;
    const CudaArray array = CudaArray::create(
        *device_, {.format = ArrayFormat::float32, .width = width, .height = height,
                   .surface_load_store = true});
    const SurfaceObject surface = SurfaceObject::from_array(array);
    EXPECT_EQ(surface.array(), array);
    launch(*stream_, LaunchConfig{.grid = height, .block = width}, kernel("write_surface"), surface,
           width, height);
    const Buffer out = device_->allocate(width * height * sizeof(float), *stream_);
    launch(*stream_, LaunchConfig{.grid = height, .block = width}, kernel("read_surface"), surface,
           width, height, out);
    const std::vector<float> read = download<float>(out);
    std::vector<float> copied(width * height);
    copy_from_array(copied.data(), copied.size() * sizeof(float), array, *stream_);
    stream_->sync();
    for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x) {
            const float written = 0.5f * (y * 1000 + x);
            ASSERT_EQ(read[y * width + x], written + 1.0f) << x << ", " << y;
            ASSERT_EQ(copied[y * width + x], written) << x << ", " << y;
        }
}

TEST_F(TextureGpu, SurfaceNeedsTheSurfaceFlag) {
    const CudaArray plain = CudaArray::create(*device_, {.width = 8, .height = 8});
    test::expect_invalid([&] { SurfaceObject::from_array(plain); },
                         {"SurfaceObject::from_array", "surface_load_store", "2D CUDA array"});
}

// ---- mipmapped arrays

TEST_F(TextureGpu, EachMipmapLevelViewHoldsItsOwnLevel) {
    const ArrayOptions base{.format = ArrayFormat::float32, .width = 64, .height = 32};
    const unsigned levels = full_mipmap_levels(base);
    ASSERT_EQ(levels, 7u);
    std::optional<MipmappedArray> mip;
    mip.emplace(MipmappedArray::create(*device_, base, levels));
    EXPECT_EQ(mip->levels(), levels);
    auto value = [](unsigned level, std::size_t x, std::size_t y) {
        return static_cast<float>(level * 1000 + y * 64 + x);
    };
    for (unsigned level = 0; level < levels; ++level) {
        const CudaArray view = mip->level(level);
        const std::size_t w = std::max<std::size_t>(1, 64u >> level);
        const std::size_t h = std::max<std::size_t>(1, 32u >> level);
        EXPECT_EQ(view.options().width, w) << "level " << level;
        EXPECT_EQ(view.options().height, h) << "level " << level;
        EXPECT_EQ(view.mipmap_level(), static_cast<int>(level));
        std::vector<float> data(w * h);
        for (std::size_t y = 0; y < h; ++y)
            for (std::size_t x = 0; x < w; ++x) data[y * w + x] = value(level, x, y);
        copy_to_array(view, data.data(), data.size() * sizeof(float), *stream_);
    }
    // Every level reads back its own data through a fresh view.
    for (unsigned level = 0; level < levels; ++level) {
        const CudaArray view = mip->level(level);
        const std::size_t w = view.options().width, h = view.options().height;
        std::vector<float> back(w * h);
        copy_from_array(back.data(), back.size() * sizeof(float), view, *stream_);
        stream_->sync();
        for (std::size_t y = 0; y < h; ++y)
            for (std::size_t x = 0; x < w; ++x)
                ASSERT_EQ(back[y * w + x], value(level, x, y)) << "level " << level;
    }
    // A level-of-detail fetch of each level at its first and last texel centres.
    const TextureObject texture = TextureObject::from_mipmapped_array(
        *mip, {.normalized_coordinates = true,
               .mipmap_filter = TextureFilterMode::point,
               .max_mipmap_level_clamp = static_cast<float>(levels - 1)});
    const Buffer out = device_->allocate(sizeof(float), *stream_);
    for (unsigned level = 0; level < levels; ++level) {
        const std::size_t w = std::max<std::size_t>(1, 64u >> level);
        const std::size_t h = std::max<std::size_t>(1, 32u >> level);
        for (std::size_t corner = 0; corner < 2; ++corner) {
            const std::size_t x = corner ? w - 1 : 0, y = corner ? h - 1 : 0;
            const float u = (x + 0.5f) / w, v = (y + 0.5f) / h;
            launch(*stream_, LaunchConfig{.grid = 1, .block = 1}, kernel("sample_2d_lod"), texture,
                   u, v, static_cast<float>(level), out);
            EXPECT_EQ(download<float>(out)[0], value(level, x, y)) << "level " << level;
        }
    }
    test::expect_invalid([&] { mip->level(levels); },
                         {"MipmappedArray::level", "level 7 is out of range", "levels 0 to 6"});
    // A level view holds its mipmapped array: still readable once every other handle is gone.
    const CudaArray level3 = mip->level(3);
    mip.reset();
    std::vector<float> back(8 * 4);
    copy_from_array(back.data(), back.size() * sizeof(float), level3, *stream_);
    stream_->sync();
    EXPECT_EQ(back[3 * 8], value(3, 0, 3));  // row 3 of the 8 x 4 level
    EXPECT_EQ(back[0], value(3, 0, 0));
}

TEST_F(TextureGpu, SurfaceOverAMipmapLevel) {
    const MipmappedArray mip = MipmappedArray::create(
        *device_, {.format = ArrayFormat::float32, .width = 64, .height = 32, .surface_load_store = true}, 3);
    const CudaArray level1 = mip.level(1);
    const SurfaceObject surface = SurfaceObject::from_array(level1);
    launch(*stream_, LaunchConfig{.grid = 16, .block = 32}, kernel("write_surface"), surface, 32, 16);
    std::vector<float> back(32 * 16);
    copy_from_array(back.data(), back.size() * sizeof(float), level1, *stream_);
    stream_->sync();
    for (int y = 0; y < 16; ++y)
        for (int x = 0; x < 32; ++x) ASSERT_EQ(back[y * 32 + x], 0.5f * (y * 1000 + x));
}

// ---- copies with pitch

TEST_F(TextureGpu, TwoDimensionalCopiesWithPitchRoundTrip) {
    constexpr std::size_t width = 64, height = 32, host_pitch = 80, device_pitch = 72;
    std::vector<float> source(host_pitch * height, -1.0f);
    for (std::size_t y = 0; y < height; ++y)
        for (std::size_t x = 0; x < width; ++x) source[y * host_pitch + x] = float(y * 100 + x);
    const CudaArray array = CudaArray::create(*device_, {.width = width, .height = height});
    copy_to_array(array, source.data(), source.size() * sizeof(float), *stream_,
                  {.pitch = host_pitch * sizeof(float)});

    // Into device memory at an offset of 64 bytes with another pitch, then back to the host.
    constexpr std::size_t offset = 64;
    const Buffer pitched = device_->allocate(
        offset + device_pitch * sizeof(float) * (height - 1) + width * sizeof(float), *stream_);
    pitched.fill_byte(0, *stream_);
    copy_from_array(pitched, array, *stream_, {.offset = offset, .pitch = device_pitch * sizeof(float)});
    const std::vector<std::uint8_t> raw = download<std::uint8_t>(pitched);
    for (std::size_t y = 0; y < height; ++y)
        for (std::size_t x = 0; x < width; ++x) {
            float value;
            std::memcpy(&value, raw.data() + offset + (y * device_pitch + x) * sizeof(float), sizeof value);
            ASSERT_EQ(value, float(y * 100 + x)) << x << ", " << y;
        }

    // Array to array, then a sub-region back to packed host rows.
    const CudaArray copy = CudaArray::create(*device_, {.width = width, .height = height});
    copy_between_arrays(copy, array, *stream_);
    std::vector<float> part(16 * 8);
    copy_from_array(part.data(), part.size() * sizeof(float), copy, *stream_, {}, {.x = 8, .y = 4, .width = 16, .height = 8});
    // And the device rows back into a region of a third array.
    const CudaArray third = CudaArray::create(*device_, {.width = width, .height = height});
    copy_to_array(third, pitched, *stream_,
                  {.offset = offset, .pitch = device_pitch * sizeof(float)});
    std::vector<float> whole(width * height);
    copy_from_array(whole.data(), whole.size() * sizeof(float), third, *stream_);
    stream_->sync();
    for (std::size_t y = 0; y < 8; ++y)
        for (std::size_t x = 0; x < 16; ++x) ASSERT_EQ(part[y * 16 + x], float((y + 4) * 100 + x + 8));
    for (std::size_t y = 0; y < height; ++y)
        for (std::size_t x = 0; x < width; ++x) ASSERT_EQ(whole[y * width + x], float(y * 100 + x));
}

// The stream-first forms, deprecated for one release, still copy: host rows into an array,
// a region of it into a second array, that array into a Buffer and back into a third, then to
// the host, every step through an old form.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
TEST_F(TextureGpu, DeprecatedSourceFirstCopiesStillCopy) {
    constexpr std::size_t width = 32, height = 16;
    std::vector<float> source(width * height);
    for (std::size_t i = 0; i < source.size(); ++i) source[i] = float(i);
    const CudaArray first = CudaArray::create(*device_, {.width = width, .height = height});
    copy_to_array(first, source.data(), source.size() * sizeof(float), *stream_);
    const CudaArray second = CudaArray::create(*device_, {.width = width, .height = height});
    copy_array(first, second, *stream_, {.y = 4, .height = 8}, {.y = 4});
    const Buffer rows = device_->allocate(width * 8 * sizeof(float), *stream_);
    copy_from_array(second, rows, *stream_, {}, {.y = 4, .height = 8});
    const CudaArray third = CudaArray::create(*device_, {.width = width, .height = 8});
    copy_to_array(third, rows, *stream_);
    std::vector<float> back(width * 8, -1.0f);
    copy_from_array(third, back.data(), back.size() * sizeof(float), *stream_);
    stream_->sync();
    for (std::size_t i = 0; i < back.size(); ++i) ASSERT_EQ(back[i], source[4 * width + i]) << i;
}
#pragma GCC diagnostic pop

TEST_F(TextureGpu, ThreeDimensionalCopiesWithPitchRoundTrip) {
    // float2 elements, 16 x 8 x 4, host rows of 20 elements and slices of 10 rows.
    constexpr std::size_t width = 16, height = 8, depth = 4, pitch = 20, rows = 10;
    std::vector<float> source(pitch * rows * depth * 2, -1.0f);
    auto at = [](std::size_t x, std::size_t y, std::size_t z, int c) {
        return float(z * 10000 + y * 100 + x) + 0.5f * c;
    };
    for (std::size_t z = 0; z < depth; ++z)
        for (std::size_t y = 0; y < height; ++y)
            for (std::size_t x = 0; x < width; ++x)
                for (int c = 0; c < 2; ++c)
                    source[((z * rows + y) * pitch + x) * 2 + c] = at(x, y, z, c);
    const CudaArray volume = CudaArray::create(
        *device_, {.format = ArrayFormat::float32, .channels = 2, .width = width, .height = height,
                   .depth = depth});
    ASSERT_EQ(volume.element_size(), 8u);
    const LinearLayout host_layout{.pitch = pitch * 8, .rows = rows};
    copy_to_array(volume, source.data(), source.size() * sizeof(float), *stream_, host_layout);
    // Packed into device memory, then back into the pitched host layout of a fresh vector.
    const Buffer packed = device_->allocate(width * height * depth * 8, *stream_);
    copy_from_array(packed, volume, *stream_);
    const CudaArray second = CudaArray::create(
        *device_, {.format = ArrayFormat::float32, .channels = 2, .width = width, .height = height,
                   .depth = depth});
    copy_to_array(second, packed, *stream_);
    std::vector<float> back(source.size(), -1.0f);
    copy_from_array(back.data(), back.size() * sizeof(float), second, *stream_, host_layout);
    // Slices 1 and 2 only, rows 2..5, into a packed vector.
    std::vector<float> part(width * 4 * 2 * 2);
    copy_from_array(part.data(), part.size() * sizeof(float), volume, *stream_, {}, {.y = 2, .z = 1, .height = 4, .depth = 2});
    stream_->sync();
    EXPECT_EQ(back, source);  // padding included: untouched -1 on both sides
    for (std::size_t z = 0; z < 2; ++z)
        for (std::size_t y = 0; y < 4; ++y)
            for (std::size_t x = 0; x < width; ++x)
                for (int c = 0; c < 2; ++c)
                    ASSERT_EQ(part[((z * 4 + y) * width + x) * 2 + c], at(x, y + 2, z + 1, c));
}

// ---- layered and cubemap arrays

TEST_F(TextureGpu, LayeredArrayReadsBackEachLayer) {
    constexpr int width = 16, height = 8, layers = 3;
    std::vector<float> data(width * height * layers);
    for (int l = 0; l < layers; ++l)
        for (int y = 0; y < height; ++y)
            for (int x = 0; x < width; ++x) data[(l * height + y) * width + x] = float(l * 1000 + y * 16 + x);
    const CudaArray array = CudaArray::create(
        *device_, {.width = width, .height = height, .depth = layers, .layered = true});
    EXPECT_EQ(array.shape(), ArrayShape::two_d_layered);
    copy_to_array(array, data.data(), data.size() * sizeof(float), *stream_);
    const TextureObject texture = TextureObject::from_array(array);
    const Buffer out = device_->allocate(data.size() * sizeof(float), *stream_);
    launch(*stream_, LaunchConfig{.grid = Dim3{height, layers}, .block = width},
           kernel("sample_layered"), texture, width, height, layers, out);
    EXPECT_EQ(download<float>(out), data);
    // One layer alone.
    std::vector<float> layer(width * height);
    copy_from_array(layer.data(), layer.size() * sizeof(float), array, *stream_, {}, {.z = 2, .depth = 1});
    stream_->sync();
    EXPECT_TRUE(std::equal(layer.begin(), layer.end(), data.begin() + 2 * width * height));
}

TEST_F(TextureGpu, CubemapArraysReadEachFace) {
    constexpr int size = 8;
    std::vector<float> faces(size * size * 6);
    for (int f = 0; f < 6; ++f)
        std::fill_n(faces.begin() + f * size * size, size * size, float(f * 100 + 1));
    const CudaArray cube = CudaArray::create(
        *device_, {.width = size, .height = size, .depth = 6, .cubemap = true});
    copy_to_array(cube, faces.data(), faces.size() * sizeof(float), *stream_);
    const TextureObject texture = TextureObject::from_array(cube, {.seamless_cubemap = true});
    const Buffer out = device_->allocate(6 * sizeof(float), *stream_);
    launch(*stream_, LaunchConfig{.grid = 1, .block = 6}, kernel("sample_cubemap"), texture, out);
    const std::vector<float> read = download<float>(out);
    for (int f = 0; f < 6; ++f) EXPECT_EQ(read[f], float(f * 100 + 1)) << "face " << f;

    constexpr int cubes = 2;
    std::vector<float> layered(size * size * 6 * cubes);
    for (int l = 0; l < cubes; ++l)
        for (int f = 0; f < 6; ++f)
            std::fill_n(layered.begin() + (l * 6 + f) * size * size, size * size, float(l * 1000 + f * 100));
    const CudaArray cubemaps = CudaArray::create(
        *device_, {.width = size, .height = size, .depth = 6 * cubes, .layered = true, .cubemap = true});
    EXPECT_EQ(cubemaps.shape(), ArrayShape::cubemap_layered);
    copy_to_array(cubemaps, layered.data(), layered.size() * sizeof(float), *stream_);
    const TextureObject layered_texture = TextureObject::from_array(cubemaps);
    const Buffer layered_out = device_->allocate(6 * cubes * sizeof(float), *stream_);
    launch(*stream_, LaunchConfig{.grid = cubes, .block = 6}, kernel("sample_cubemap_layered"),
           layered_texture, layered_out);
    const std::vector<float> layered_read = download<float>(layered_out);
    for (int l = 0; l < cubes; ++l)
        for (int f = 0; f < 6; ++f)
            EXPECT_EQ(layered_read[l * 6 + f], float(l * 1000 + f * 100)) << "cubemap " << l << ", face " << f;
}

// ---- textures over memory

TEST_F(TextureGpu, LinearAndPitchedMemoryTextures) {
    // Textures over memory want addresses aligned to TEXTURE_ALIGNMENT (512 bytes on an H100),
    // more than an allocation promises: views at an aligned address inside larger buffers.
    const DeviceProperties& properties = device_->properties();
    const std::size_t texture_alignment = static_cast<std::size_t>(properties.texture_alignment);
    auto aligned_upload = [&](const std::vector<float>& data, Buffer& storage) {
        const std::size_t bytes = data.size() * sizeof(float);
        storage = device_->allocate(bytes + texture_alignment, *stream_);
        const CUdeviceptr aligned =
            (storage.handle() + texture_alignment - 1) / texture_alignment * texture_alignment;
        Buffer view = Buffer::wrap_unowned(aligned, bytes);
        view.copy_from(data, *stream_);
        return view;
    };
    std::vector<float> values(1024);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = float(i) * 0.25f;
    Buffer linear_storage, pitched_storage;
    const Buffer linear = aligned_upload(values, linear_storage);
    const TextureObject texture = TextureObject::from_linear(linear, {.format = ArrayFormat::float32});
    const Buffer out = device_->allocate(values.size() * sizeof(float), *stream_);
    launch(*stream_, LaunchConfig{.grid = 8, .block = 128}, kernel("fetch_linear"), texture, out, 1024);
    EXPECT_EQ(download<float>(out), values);

    constexpr int width = 20, height = 10;
    const std::size_t alignment = static_cast<std::size_t>(properties.texture_pitch_alignment);
    const std::size_t pitch = (width * sizeof(float) + alignment - 1) / alignment * alignment;
    std::vector<float> rows(pitch / sizeof(float) * height, -1.0f);
    std::vector<float> expected(width * height);
    for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x)
            rows[y * pitch / sizeof(float) + x] = expected[y * width + x] = float(y * 100 + x);
    const Buffer pitched = aligned_upload(rows, pitched_storage);
    const TextureObject pitched_texture = TextureObject::from_pitch2d(
        pitched, {.format = ArrayFormat::float32, .width = width, .height = height, .pitch = pitch});
    const Buffer pitched_out = device_->allocate(expected.size() * sizeof(float), *stream_);
    launch(*stream_, LaunchConfig{.grid = height, .block = width}, kernel("sample_pitch2d"),
           pitched_texture, width, height, pitched_out);
    EXPECT_EQ(download<float>(pitched_out), expected);

    // Each names what it reads, put into words when asked.
    EXPECT_EQ(texture.description(), "texture object " + std::to_string(texture.handle()) +
                                         " over 1024 " + to_string(ArrayFormat::float32) +
                                         " elements of " + linear.description());
    EXPECT_EQ(pitched_texture.description(),
              "texture object " + std::to_string(pitched_texture.handle()) + " over 20 x 10 " +
                  to_string(ArrayFormat::float32) + " (pitch " + std::to_string(pitch) + ") in " +
                  pitched.description());

    // The words are built when asked: a buffer closed since reads as closed.
    Buffer closing = Buffer::wrap_unowned(linear.handle(), linear.size());
    const TextureObject over_closed = TextureObject::from_linear(closing, {.format = ArrayFormat::float32});
    closing.close();
    EXPECT_NE(over_closed.description().find("elements of a closed Buffer"), std::string::npos)
        << over_closed.description();

    // Memory not aligned to TEXTURE_ALIGNMENT is refused before the driver.
    const Buffer misaligned = Buffer::wrap_unowned(linear.handle() + 4, linear.size() - 4);
    test::expect_invalid([&] { TextureObject::from_linear(misaligned, {}); },
                         {"TextureObject::from_linear", "CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT"});
}

TEST_F(TextureGpu, TexturesOverArraysDescribeTheArrayTheyRead) {
    const CudaArray array = CudaArray::create(*device_, {.width = 64, .height = 32});
    const TextureObject texture = TextureObject::from_array(array);
    EXPECT_EQ(texture.description(),
              "texture object " + std::to_string(texture.handle()) + " over " + array.description());
    const MipmappedArray mipmapped = MipmappedArray::create(*device_, {.width = 64, .height = 64}, 3);
    const TextureObject levels =
        TextureObject::from_mipmapped_array(mipmapped, {.normalized_coordinates = true});
    EXPECT_EQ(levels.description(),
              "texture object " + std::to_string(levels.handle()) + " over " + mipmapped.description());
    EXPECT_NE(levels.description().find("mipmapped"), std::string::npos);
    TextureObject moved = TextureObject::from_array(array);
    const TextureObject taker = std::move(moved);
    EXPECT_EQ(moved.description(), "moved-from TextureObject");  // NOLINT(bugprone-use-after-move)
    EXPECT_NE(taker.description().find(array.description()), std::string::npos);
}

// ---- limits and releases

TEST_F(TextureGpu, SizesTheDeviceCannotDoAreRefusedNamingTheLimit) {
    const DeviceProperties& properties = device_->properties();
    const std::size_t too_wide = static_cast<std::size_t>(properties.maximum_texture2d_width) + 1;
    test::expect_invalid([&] { CudaArray::create(*device_, {.width = too_wide, .height = 4}); },
                         {"CudaArray::create", "CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH",
                          std::to_string(too_wide).c_str()});
    const std::size_t too_many = static_cast<std::size_t>(properties.maximum_texture2d_layered_layers) + 1;
    test::expect_invalid(
        [&] { CudaArray::create(*device_, {.width = 4, .height = 4, .depth = too_many, .layered = true}); },
        {"CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS"});
    test::expect_invalid(
        [&] { MipmappedArray::create(*device_, {.width = 64, .height = 64}, 8); },
        {"MipmappedArray::create", "levels is 8", "1 to 7"});
}

TEST_F(TextureGpu, TextureDroppedRightAfterItsLaunchIsReleasedAfterTheKernel) {
    test::WarningLog warnings;
    constexpr int width = 64, height = 64;
    const Buffer out = device_->allocate(width * height * sizeof(float), *stream_);
    {
        std::vector<float> image(width * height, 3.0f);
        const CudaArray array = CudaArray::create(*device_, {.width = width, .height = height});
        copy_to_array(array, image.data(), image.size() * sizeof(float), *stream_);
        stream_->sync();
        std::vector<float> u(width * height, 0.5f);
        const Buffer coordinates = upload(u);
        stream_->sync();
        const TextureObject texture = TextureObject::from_array(
            array, {.filter = TextureFilterMode::linear, .normalized_coordinates = true});
        launch(*stream_, LaunchConfig{.grid = width, .block = height}, kernel("sample_2d"), texture,
               coordinates, coordinates, out, width * height);
        // Texture, array and coordinates dropped here, with the kernel possibly still running.
    }
    const std::vector<float> read = download<float>(out);
    for (float value : read) ASSERT_EQ(value, 3.0f);
    detail::wait_for_deferred_releases();
    for (const Warning& warning : warnings.seen) ADD_FAILURE() << warning.message;
}

}  // namespace
