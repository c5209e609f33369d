// Textures and surfaces: a 32 x 32 image in a CUDA array is scaled up to 64 x 64 by a kernel that
// fetches it through a texture object with bilinear filtering at normalized coordinates, and
// writes each pixel into a second array through a surface object. The result is copied back to
// the host with a row pitch and checked against the same bilinear filter computed on the CPU.
#include <cudacore/cudacore.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

// cudaTextureObject_t and cudaSurfaceObject_t are 64-bit handles: launch() passes a
// TextureObject and a SurfaceObject as them.
static const char* kSource = R"(
extern "C" __global__ void upscale(cudaTextureObject_t image, cudaSurfaceObject_t out,
                                   int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    float u = (x + 0.5f) / width, v = (y + 0.5f) / height;
    surf2Dwrite(tex2D<float>(image, u, v), out, x * (int)sizeof(float), y);
}
)";

int main() try {
    using namespace cudacore;
    if (!system::driver_available() || system::device_count() == 0) {
        std::printf("skipped: no CUDA driver or GPU on this machine\n");
        return 0;
    }
    Device device(0);
    Stream stream = device.create_stream();
    Kernel upscale = Program(kSource, SourceType::cxx, {.arch = device.arch()})
                         .compile(CodeType::cubin)
                         .get_kernel("upscale");

    const int in_size = 32, out_size = 64;
    std::vector<float> image(in_size * in_size);
    for (int y = 0; y < in_size; ++y)
        for (int x = 0; x < in_size; ++x) image[y * in_size + x] = float((x * 7 + y * 3) % 32);

    CudaArray source = CudaArray::create(device, {.format = ArrayFormat::float32,
                                                  .width = in_size, .height = in_size});
    copy_to_array(source, image.data(), image.size() * sizeof(float), stream);
    // The texture holds `source`; the surface holds `target` (made with surface_load_store).
    TextureObject texture = TextureObject::from_array(
        source, {.filter = TextureFilterMode::linear, .normalized_coordinates = true});
    CudaArray target = CudaArray::create(device, {.format = ArrayFormat::float32, .width = out_size,
                                                  .height = out_size, .surface_load_store = true});
    SurfaceObject surface = SurfaceObject::from_array(target);

    launch(stream, LaunchConfig{.grid = Dim3(out_size / 16, out_size / 16), .block = Dim3(16, 16)},
           upscale, texture, surface, out_size, out_size);

    // Back to the host in rows of 80 floats (a pitch of 320 bytes).
    const std::size_t pitch = 80;
    std::vector<float> result(pitch * out_size);
    copy_from_array(result.data(), result.size() * sizeof(float), target, stream, {.pitch = pitch * sizeof(float)});
    stream.sync();

    // The same filter on the CPU: texel centres at i + 0.5, edges clamped. Output pixel centres
    // fall a quarter of a texel from the input's, a weight the texture unit holds exactly.
    auto texel = [&](int x, int y) {
        return image[std::clamp(y, 0, in_size - 1) * in_size + std::clamp(x, 0, in_size - 1)];
    };
    std::size_t wrong = 0;
    for (int y = 0; y < out_size; ++y)
        for (int x = 0; x < out_size; ++x) {
            const float fx = (x + 0.5f) / out_size * in_size - 0.5f;
            const float fy = (y + 0.5f) / out_size * in_size - 0.5f;
            const int x0 = int(std::floor(fx)), y0 = int(std::floor(fy));
            const float a = fx - x0, b = fy - y0;
            const float expected = (1 - a) * (1 - b) * texel(x0, y0) + a * (1 - b) * texel(x0 + 1, y0) +
                                   (1 - a) * b * texel(x0, y0 + 1) + a * b * texel(x0 + 1, y0 + 1);
            if (std::fabs(result[y * pitch + x] - expected) > 1e-3f) ++wrong;
        }
    std::printf("32 x 32 image scaled to 64 x 64 through a texture and a surface: %zu wrong\n", wrong);
    return wrong == 0 ? 0 : 1;
} catch (const cudacore::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
}
