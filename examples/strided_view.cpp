// Strided views and DLPack: a matrix on the GPU viewed with shape and strides (then transposed,
// no copy), handed out as a DLPack tensor, taken back as another library would, read by a kernel
// through the view. Mirrors cuda.core's examples/strided_memory_view_gpu.py.
#include <cudacore/cudacore.hpp>

#include <cstdint>
#include <cstdio>
#include <vector>

// Copies the strided 2-D view `in` (strides in elements) into the compact row-major `out`.
static const char* kSource = R"(
extern "C" __global__ void gather(const float* in, long long rows, long long cols,
                                  long long row_stride, long long col_stride, float* out) {
    long long r = blockIdx.y, c = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows && c < cols) out[r * cols + c] = in[r * row_stride + c * col_stride];
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
    Kernel gather = Program(kSource, SourceType::cxx, {.arch = device.arch()})
                        .compile(CodeType::cubin)
                        .get_kernel("gather");

    const std::int64_t rows = 300, cols = 200;
    std::vector<float> matrix(rows * cols);
    for (std::int64_t i = 0; i < rows * cols; ++i) matrix[i] = float(i);
    Buffer data = device.allocate(matrix.size() * sizeof(float), stream);
    data.copy_from(matrix, stream);

    // The transpose, as a view: shape (cols, rows), strides (1, cols) elements; no copy.
    StridedMemoryView transposed = StridedMemoryView::from_buffer(
        data, {.shape = {cols, rows}, .strides = {1, cols}, .dtype = {kDLFloat, 32, 1}});

    // Out through DLPack and back, as a tensor would travel to another library and return:
    // the memory is shared, and stays alive until the last holder lets go.
    DLManagedTensor* tensor = transposed.to_dlpack();
    StridedMemoryView again = StridedMemoryView::from_dlpack(tensor);
    bool layout_kept = again.shape() == transposed.shape() &&
                       again.strides() == transposed.strides() &&
                       again.data() == transposed.data() && !again.is_c_contiguous();

    Buffer out = device.allocate(matrix.size() * sizeof(float), stream);
    launch(stream,
           LaunchConfig{.grid = {unsigned((again.shape()[1] + 127) / 128),
                                 unsigned(again.shape()[0])},
                        .block = 128},
           gather, again, again.shape()[0], again.shape()[1], again.strides()[0],
           again.strides()[1], out);
    std::vector<float> result(matrix.size());
    out.copy_to(result, stream);
    stream.sync();

    std::size_t wrong = 0;
    for (std::int64_t r = 0; r < cols; ++r)
        for (std::int64_t c = 0; c < rows; ++c)
            if (result[r * rows + c] != matrix[c * cols + r]) ++wrong;
    std::printf("transposed %lldx%lld through a strided view and DLPack: layout %s, %zu wrong\n",
                (long long)rows, (long long)cols, layout_kept ? "kept" : "CHANGED", wrong);
    return wrong == 0 && layout_kept ? 0 : 1;
} catch (const cudacore::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
}
