// Start-up, cudacore: the kernel compiled through the default disk cache (a hit once the cache
// holds it: $CUDACORE_CACHE_DIR), then launched; prints "ok" when the 32 values came back right,
// and "miss" on stderr when it had to compile. It takes the driver program's steps (the legacy
// default stream, memory from cuMemAlloc); with --stream-ordered, those of the driver program's
// --stream-ordered (a stream of its own, memory from the device's pool). With --steps, prints
// each step's milliseconds since main() began on stderr (where a start-up's time goes).
#include "startup_clock.hpp"

#include <cudacore/cudacore.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

// The same text as fill_kernel.cuh, which the nvcc and driver programs are built from.
static const char* kSource =
    "extern \"C\" __global__ void fill(int* out, int value) { out[threadIdx.x] = value + static_cast<int>(threadIdx.x); }\n";

static int run(int argc, char** argv) try {
    using namespace cudacore;
    bool steps = false;
    bool stream_ordered = false;
    for (int i = 1; i < argc; ++i) {
        steps = steps || std::strcmp(argv[i], "--steps") == 0;
        stream_ordered = stream_ordered || std::strcmp(argv[i], "--stream-ordered") == 0;
    }
    const auto began = std::chrono::steady_clock::now();
    auto step = [&](const char* name) {
        if (steps)
            std::fprintf(stderr, "step %-28s %8.3f ms\n", name,
                         std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began).count());
    };
    const Device device(0);
    device.set_current();
    step("device current");
    Program program(kSource, SourceType::cxx, {.name = "fill.cu", .arch = device.arch()});
    const std::unique_ptr<ProgramCache> cache = open_default_program_cache();
    step("cache open");
    const ObjectCode code = compile_cached(program, CodeType::cubin, {}, {.cache = cache.get()});
    if (!cache || cache->stats().hits == 0) std::fputs("miss\n", stderr);
    step("compile_cached");
    const Kernel fill = code.get_kernel("fill");
    step("get_kernel");
    const Stream stream = stream_ordered ? device.create_stream() : device.default_stream();
    step("stream");
    Buffer out = stream_ordered ? device.allocate(32 * sizeof(int), stream)
                                : std::make_shared<SynchronousMemoryResource>(device)->allocate(32 * sizeof(int), stream);
    step("allocate");
    launch(stream, LaunchConfig{.grid = 1, .block = 32}, fill, out, 7);
    std::vector<int> host(32);
    out.copy_to(host, stream);
    stream.sync();
    step("launch + copy + sync");
    for (int i = 0; i < 32; ++i)
        if (host[i] != 7 + i) return 1;
    std::puts("ok");
    startup_clock("work");
    return 0;
} catch (const std::exception& error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 1;
}

int main(int argc, char** argv) {
    startup_clock_start();
    const int status = run(argc, argv);  // run's objects are destroyed as it returns
    startup_clock("done");
    return status;
}
