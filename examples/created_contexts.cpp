// Contexts you create: two contexts on one device, each with its own stream, memory and a kernel
// launched in it, and the contexts destroyed once the last object made in them goes (here the
// Context values go first). cuda-api-wrappers' context::create has the same role; cuda.core works
// in primary contexts only.
#include <cudacore/cudacore.hpp>

#include <cstdio>
#include <memory>
#include <optional>
#include <vector>

static const char* kSource = R"(
extern "C" __global__ void fill(int* out, int value, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = value + (int)i;
}
)";

int main() try {
    using namespace cudacore;
    if (!system::driver_available() || system::device_count() == 0) {
        std::printf("skipped: no CUDA driver or GPU on this machine\n");
        return 0;
    }
    Device device(0);
    Kernel fill = Program(kSource, SourceType::cxx, {.arch = device.arch()})
                      .compile(CodeType::cubin)
                      .get_kernel("fill");

    std::optional<Context> contexts[2] = {
        Context::create(device, {.scheduling = ContextScheduling::blocking_sync}),
        Context::create(device, {.scheduling = ContextScheduling::spin})};
    constexpr std::size_t n = 1 << 16;
    std::optional<Stream> streams[2];
    std::optional<Buffer> buffers[2];
    for (int i = 0; i < 2; ++i) {
        // Memory from cuMemAlloc in this context: the stream and the buffer hold the context.
        auto memory = std::make_shared<SynchronousMemoryResource>(*contexts[i]);
        streams[i] = contexts[i]->create_stream();
        buffers[i] = memory->allocate(n * sizeof(int), *streams[i]);
        launch(*streams[i], LaunchConfig{.grid = n / 256, .block = 256}, fill, *buffers[i],
               1000 * (i + 1), n);
        std::printf("context %d: %p, scheduling flags 0x%x; buffer from %s\n", i,
                    static_cast<void*>(contexts[i]->handle()), contexts[i]->flags() & 0x7u,
                    memory->description().c_str());
    }
    contexts[0].reset();  // the Context values go first: the streams and buffers keep them
    contexts[1].reset();

    for (int i = 0; i < 2; ++i) {
        std::vector<int> host(n);
        buffers[i]->copy_to(host, *streams[i]);
        streams[i]->sync();
        for (std::size_t j = 0; j < n; ++j) {
            if (host[j] != 1000 * (i + 1) + static_cast<int>(j)) {
                std::printf("wrong: context %d, element %zu is %d\n", i, j, host[j]);
                return 1;
            }
        }
    }
    std::printf("both kernels wrote their own context's memory; contexts destroyed with their "
                "last object\n");
    return 0;
} catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    return 1;
}
