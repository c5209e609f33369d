// Limits and cache preference of a context: the printf FIFO, the malloc heap and the stack set
// and read back on the device's primary context and on a created context, the L1 / shared memory
// preference set and read back on both, then a kernel in each that uses device printf and malloc
// within the limits just set. cuda-api-wrappers' context::set_limit / set_cache_preference.
#include <cudacore/cudacore.hpp>

#include <cstdio>
#include <vector>

static const char* kSource = R"(
extern "C" __global__ void scratch_sums(int* out, int per_thread, int tag) {
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    // Scratch from the device heap (its size is the context's malloc_heap_size limit).
    int* scratch = static_cast<int*>(malloc(per_thread * sizeof(int)));
    if (!scratch) { out[id] = -1; return; }
    int sum = 0;
    for (int i = 0; i < per_thread; ++i) { scratch[i] = id + i; sum += scratch[i]; }
    free(scratch);
    out[id] = sum;
    if (id == 0) printf("kernel in context %d: thread 0 summed %d values from the heap\n", tag, per_thread);
}
)";

int main() try {
    using namespace cudacore;
    if (!system::driver_available() || system::device_count() == 0) {
        std::printf("skipped: no CUDA driver or GPU on this machine\n");
        return 0;
    }
    constexpr std::size_t MiB = std::size_t{1} << 20;
    Device device(0);
    Kernel kernel = Program(kSource, SourceType::cxx, {.arch = device.arch()})
                        .compile(CodeType::cubin)
                        .get_kernel("scratch_sums");
    Context primary = device.context();
    Context created = Context::create(device);
    const Context* contexts[2] = {&primary, &created};
    const CachePreference preferences[2] = {CachePreference::prefer_shared, CachePreference::prefer_l1};
    const std::size_t heaps[2] = {16 * MiB, 32 * MiB};
    bool right = true;
    for (int c = 0; c < 2; ++c) {
        const Context& context = *contexts[c];
        // The heap must be set before the first kernel that uses malloc runs in the context.
        set_limit(context, ContextLimit::malloc_heap_size, heaps[c]);
        set_limit(context, ContextLimit::printf_fifo_size, 2 * MiB);
        set_limit(context, ContextLimit::stack_size, 2048);
        set_cache_preference(context, preferences[c]);
        const std::size_t heap = limit(context, ContextLimit::malloc_heap_size);
        const std::size_t fifo = limit(context, ContextLimit::printf_fifo_size);
        const std::size_t stack = limit(context, ContextLimit::stack_size);
        const CachePreference preference = cache_preference(context);
        const StreamPriorityRange priorities = stream_priority_range(context);
        std::printf("%s context: heap %zu MiB, printf FIFO %zu MiB, stack %zu bytes, cache %s, "
                    "stream priorities %d..%d\n",
                    context.is_primary() ? "primary" : "created", heap / MiB, fifo / MiB, stack,
                    to_string(preference).c_str(), priorities.greatest, priorities.least);
        right = right && heap == heaps[c] && fifo == 2 * MiB && stack >= 2048 &&
                preference == preferences[c];
    }
    // Each context kept its own values; a Device means its primary context.
    right = right && limit(primary, ContextLimit::malloc_heap_size) == heaps[0] &&
            cache_preference(primary) == preferences[0] &&
            limit(device, ContextLimit::malloc_heap_size) == heaps[0] &&
            cache_preference(device) == preferences[0] &&
            stream_priority_range(device) == stream_priority_range(primary);

    constexpr int blocks = 8, threads = 128, per_thread = 256;  // 1 MiB of scratch at most
    for (int c = 0; c < 2; ++c) {
        Stream stream = contexts[c]->create_stream();
        auto memory = std::make_shared<SynchronousMemoryResource>(*contexts[c]);
        Buffer out = memory->allocate(blocks * threads * sizeof(int), stream);
        launch(stream, LaunchConfig{.grid = blocks, .block = threads}, kernel, out, per_thread, c);
        std::vector<int> host(blocks * threads);
        out.copy_to(host, stream);
        stream.sync();
        for (int id = 0; id < blocks * threads; ++id) {
            const int expected = per_thread * id + per_thread * (per_thread - 1) / 2;
            if (host[id] != expected) {
                std::printf("wrong: context %d, thread %d summed %d, expected %d\n", c, id,
                            host[id], expected);
                right = false;
                break;
            }
        }
    }
    std::printf(right ? "limits and cache preference: ok on the primary and a created context\n"
                      : "limits and cache preference: WRONG\n");
    return right ? 0 : 1;
} catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    return 1;
}
