// Start-up, cudacore: the kernel compiled through the default disk cache (a hit once the cache
// holds it: $CUDACORE_CACHE_DIR), then launched; prints "ok" when the 32 values came back right,
// and "miss" on stderr when it had to compile.
#include <cudacore/cudacore.hpp>

#include <cstdio>
#include <vector>

// The same text as fill_kernel.cuh, which the nvcc and driver programs are built from.
static const char* kSource =
    "extern \"C\" __global__ void fill(int* out, int value) { out[threadIdx.x] = value + static_cast<int>(threadIdx.x); }\n";

int main() try {
    using namespace cudacore;
    const Device device(0);
    device.set_current();
    Program program(kSource, SourceType::cxx, {.name = "fill.cu", .arch = device.arch()});
    const std::unique_ptr<ProgramCache> cache = open_default_program_cache();
    const ObjectCode code = compile_cached(program, CodeType::cubin, {}, {.cache = cache.get()});
    if (!cache || cache->stats().hits == 0) std::fputs("miss\n", stderr);
    const Kernel fill = code.get_kernel("fill");
    const Stream stream = device.create_stream();
    Buffer out = device.allocate(32 * sizeof(int), stream);
    launch(stream, LaunchConfig{.grid = 1, .block = 32}, fill, out, 7);
    std::vector<int> host(32);
    out.copy_to(host, stream);
    stream.sync();
    for (int i = 0; i < 32; ++i)
        if (host[i] != 7 + i) return 1;
    std::puts("ok");
    return 0;
} catch (const std::exception& error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 1;
}
