// Memory operations: a pool of its own, pinned host memory and managed memory, each handed out
// as Buffers; kernels write into them, copies and fills move data between them, and every
// value is checked on the host. Mirrors cuda.core's examples/memory_ops.py.
#include <cudacore/cudacore.hpp>

#include <cstdio>
#include <memory>
#include <vector>

static const char* kSource = R"(
extern "C" __global__ void scale_add(float* x, float a, float b, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) x[i] = a * x[i] + b;
}
)";

namespace {

using namespace cudacore;

std::size_t count_wrong(std::span<const float> values, float expected) {
    std::size_t wrong = 0;
    for (float v : values)
        if (v != expected) ++wrong;
    return wrong;
}

}  // namespace

int main() try {
    if (!system::driver_available() || system::device_count() == 0) {
        std::printf("skipped: no CUDA driver or GPU on this machine\n");
        return 0;
    }
    Device device(0);
    Stream stream = device.create_stream();
    Kernel scale_add = Program(kSource, SourceType::cxx, {.arch = device.arch()})
                           .compile(CodeType::cubin)
                           .get_kernel("scale_add");
    const std::size_t n = 1 << 20, bytes = n * sizeof(float);
    const LaunchConfig config{.grid = unsigned((n + 255) / 256), .block = 256};
    std::size_t wrong = 0;

    // Device memory from a pool of its own, limited to 64 MiB, stream-ordered.
    auto pool = DeviceMemoryResource::create_owned_pool(device, {.max_size = 64 << 20});
    Buffer on_device = pool->allocate(bytes, stream);
    on_device.fill_uint32(0x40000000, stream);                  // 2.0f in every element
    launch(stream, config, scale_add, on_device, 3.0f, 1.0f, n);  // 3 * 2 + 1 = 7

    // Pinned host memory: the host reads it directly once the stream is done.
    auto pinned = std::make_shared<LegacyPinnedMemoryResource>(device);
    Buffer staging = pinned->allocate(bytes, stream);
    on_device.copy_to(staging, stream);
    stream.sync();
    wrong += count_wrong(staging.span<float>(), 7.0f);
    std::printf("owned pool: %llu bytes in use, device buffer -> pinned: %s\n",
                (unsigned long long)pool->memory_pool().used_mem_current(),
                wrong == 0 ? "ok" : "WRONG");

    // Host vector -> device -> host vector, through the same kernel.
    std::vector<float> host(n, 5.0f), back(n);
    on_device.copy_from(host, stream);
    launch(stream, config, scale_add, on_device, 0.5f, -1.0f, n);  // 0.5 * 5 - 1 = 1.5
    on_device.copy_to(back, stream);
    stream.sync();
    wrong += count_wrong(back, 1.5f);

    // Managed memory: written by the host, changed by a kernel, read by the host again.
    if (device.properties().managed_memory) {
        auto managed = std::make_shared<ManagedMemoryResource>(device);
        Buffer shared = managed->allocate(bytes, stream);
        stream.sync();
        for (float& v : shared.span<float>()) v = 4.0f;
        launch(stream, config, scale_add, shared, 2.0f, 0.0f, n);  // 8
        stream.sync();
        const std::size_t managed_wrong = count_wrong(shared.span<float>(), 8.0f);
        std::printf("managed memory: %s\n", managed_wrong == 0 ? "ok" : "WRONG");
        wrong += managed_wrong;
    } else {
        std::printf("managed memory: not supported by this device, part skipped\n");
    }

    // Buffers free themselves when their last copy goes; close() frees one now, on a stream.
    on_device.close(stream);
    staging.close(stream);
    stream.sync();
    std::printf("memory operations: %zu wrong values\n", wrong);
    return wrong == 0 ? 0 : 1;
} catch (const cudacore::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
}
