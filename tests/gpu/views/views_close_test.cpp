// close() on CudaArray, MipmappedArray, TextureObject and SurfaceObject on a real GPU: an array
// closed by its last holder gives its memory back (cuMemGetInfo), objects over an array keep it
// alive, later calls (and launches given a closed texture or surface) name the call and the
// closed object, copies are closed with it while reset() drops one share only, closing twice is
// harmless.
#include "test_support.hpp"

#include "cudacore/cudacore.hpp"
#include "runtime/release/release.hpp"
#include "support/box_access.hpp"
#include "views/array_box.hpp"

#include <optional>
#include <string>
#include <vector>

namespace {

using namespace cudacore;

using cudacore::test::expect_invalid;

// 4096 x 4096 float32x4: 256 MiB.
ArrayOptions big_image() {
    return ArrayOptions{.format = ArrayFormat::float32, .channels = 4, .width = 4096,
                        .height = 4096, .surface_load_store = true};
}

TEST(CudaArrayCloseGpu, TheLastHolderGivesTheMemoryBack) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    device.set_current();
    CudaArray array = CudaArray::create(device, big_image());
    // The box destroys the array (cuArrayDestroy) when it goes. Not the device's free memory:
    // other processes on the GPU move it at any moment.
    const std::weak_ptr<const detail::ArrayBox> box = detail::box_of(array);
    const std::string described = array.description();
    array.close();
    detail::wait_for_deferred_releases();
    EXPECT_TRUE(box.expired()) << "the last holder closed, the array is still alive";
    EXPECT_TRUE(array.is_closed());
    EXPECT_EQ(array.handle(), nullptr);
    EXPECT_EQ(array.description(), described + " (closed)");
    const std::string array_closed = "TextureObject::from_array: " + described + " is closed (CudaArray::close";
    expect_invalid([&] { TextureObject::from_array(array); }, {array_closed.c_str()});
    expect_invalid([&] { SurfaceObject::from_array(array); }, {"SurfaceObject::from_array"});
    Stream stream = device.create_stream();
    std::vector<float> host(4);
    expect_invalid([&] { copy_to_array(array, host.data(), 16, stream); }, {"is closed"});
    array.close();  // nothing more
}

TEST(CudaArrayCloseGpu, CopiesSeeTheCloseAndObjectsOverItKeepTheArray) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    device.set_current();
    Stream stream = device.create_stream();
    std::optional<CudaArray> array = CudaArray::create(device, big_image());
    const std::weak_ptr<const detail::ArrayBox> box = detail::box_of(*array);
    CudaArray copy = *array;
    std::optional<TextureObject> texture = TextureObject::from_array(*array);
    array->close();
    // The copy is closed with it, and says so.
    EXPECT_TRUE(copy.is_closed());
    EXPECT_EQ(copy.handle(), nullptr);
    std::vector<float> in(4, 2.5f), out(4, 0.0f);
    expect_invalid([&] {
        copy_to_array(copy, in.data(), in.size() * sizeof(float), stream, {}, {.width = 1, .height = 1});
    }, {"is closed (CudaArray::close"});
    detail::wait_for_deferred_releases();
    EXPECT_FALSE(box.expired()) << "the texture holds the array";
    // The texture held the array: closing it, the last holder, frees it.
    texture->close();
    EXPECT_TRUE(texture->is_closed());
    EXPECT_EQ(texture->handle(), 0u);
    detail::wait_for_deferred_releases();
    EXPECT_TRUE(box.expired()) << "the texture, the last holder, closed; the array is still alive";
}

TEST(CudaArrayCloseGpu, ResetDropsOneShareAndTheCopyKeepsWorking) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    device.set_current();
    Stream stream = device.create_stream();
    CudaArray array = CudaArray::create(device, big_image());
    CudaArray copy = array;
    array.reset();
    EXPECT_FALSE(array.is_closed());
    EXPECT_EQ(array.handle(), nullptr);
    EXPECT_FALSE(copy.is_closed());
    std::vector<float> in(4, 2.5f), out(4, 0.0f);
    copy_to_array(copy, in.data(), in.size() * sizeof(float), stream, {}, {.width = 1, .height = 1});
    copy_from_array(out.data(), out.size() * sizeof(float), copy, stream, {}, {.width = 1, .height = 1});
    stream.sync();
    EXPECT_EQ(out, in);
}

TEST(TextureCloseGpu, ALaunchGivenAClosedTextureOrSurfaceRefuses) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    device.set_current();
    Stream stream = device.create_stream();
    ProgramOptions options;
    options.name = "close_views";
    options.arch = device.arch();
    ObjectCode code = Program(R"(extern "C" __global__ void take(unsigned long long object) {})",
                              SourceType::cxx, options)
                          .compile(CodeType::cubin);
    Kernel kernel = code.get_kernel("take");
    CudaArray array = CudaArray::create(device, {.width = 64, .height = 64, .surface_load_store = true});
    TextureObject texture = TextureObject::from_array(array);
    SurfaceObject surface = SurfaceObject::from_array(array);
    TextureObject texture_copy = texture;
    texture.close();
    surface.close();
    surface.close();  // nothing more
    expect_invalid([&] { launch(stream, LaunchConfig{.grid = 1, .block = 1}, kernel, texture); }, {"launch: texture object"});
    expect_invalid([&] { launch(stream, LaunchConfig{.grid = 1, .block = 1}, kernel, surface); }, {"is closed (SurfaceObject::close"});
    // The copy was closed with it.
    EXPECT_TRUE(texture_copy.is_closed());
    expect_invalid([&] { launch(stream, LaunchConfig{.grid = 1, .block = 1}, kernel, texture_copy); }, {"is closed (TextureObject::close"});
    // reset() drops one share: the other copy still launches.
    TextureObject kept = TextureObject::from_array(array);
    TextureObject kept_copy = kept;
    kept.reset();
    launch(stream, LaunchConfig{.grid = 1, .block = 1}, kernel, kept_copy);
    stream.sync();
    EXPECT_NE(kept_copy.handle(), 0u);
}

TEST(MipmappedArrayCloseGpu, LevelsKeepTheirArrayAndTheClosedOneRefuses) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    device.set_current();
    MipmappedArray mipmapped = MipmappedArray::create(device, {.width = 256, .height = 256}, 4);
    CudaArray level = mipmapped.level(1);
    mipmapped.close();
    EXPECT_TRUE(mipmapped.is_closed());
    EXPECT_EQ(mipmapped.handle(), nullptr);
    EXPECT_EQ(mipmapped.levels(), 0u);
    expect_invalid([&] { mipmapped.level(0); }, {"MipmappedArray::level: mipmapped 2D", "is closed (MipmappedArray::close"});
    // The level view holds the mipmapped array: still usable.
    Stream stream = device.create_stream();
    std::vector<float> in(128 * 128, 1.5f), out(128 * 128, 0.0f);
    copy_to_array(level, in.data(), in.size() * sizeof(float), stream);
    copy_from_array(out.data(), out.size() * sizeof(float), level, stream);
    stream.sync();
    EXPECT_EQ(out, in);
    mipmapped.close();  // nothing more
}

}  // namespace
