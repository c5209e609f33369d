// A program cache that survives runs: kernels compiled through a DiskProgramCache are stored on
// disk, so the next run (or another process) loads them without compiling. Run it twice: the
// second run reports hits. cudacore's own; cuda.core's counterpart is its program cache.
#include <cudacore/cudacore.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

static const char* kSource = R"(
template <int N> __global__ void power(float* x, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float v = x[i], p = 1.0f; for (int k = 0; k < N; ++k) p *= v; x[i] = p; }
}
)";

int main(int argc, char** argv) try {
    using namespace cudacore;
    // The cache folder: the first argument, else one in the temporary folder.
    const char* tmp = std::getenv("TMPDIR");
    const std::filesystem::path folder =
        argc > 1 ? std::filesystem::path(argv[1])
                 : std::filesystem::path(tmp && *tmp ? tmp : "/tmp") / "cudacore-example-cache";
    const bool gpu = system::driver_available() && system::device_count() > 0;
    // Without a GPU the code is still compiled and cached, for an arch named here.
    const std::string arch = gpu ? Device(0).arch() : "sm_90";
    const std::vector<std::string> names = {"power<2>", "power<3>", "power<4>"};

    // Compile through the cache: a miss compiles and stores, a hit reads the file.
    ObjectCode code = [&] {
        DiskProgramCache cache(folder);
        Program program(kSource, SourceType::cxx, {.name = "power.cu", .arch = arch});
        ObjectCode compiled = compile_cached(program, CodeType::cubin, names, {.cache = &cache});
        const CacheStats stats = cache.stats();
        std::printf("cache %s: %s (%llu entries on disk)\n", folder.c_str(),
                    stats.hits ? "hit, nothing compiled" : "miss, compiled and stored",
                    (unsigned long long)stats.entries);
        return compiled;
    }();

    // Another cache object on the same folder (another process would do the same) finds it.
    DiskProgramCache reopened(folder);
    Program same(kSource, SourceType::cxx, {.name = "power.cu", .arch = arch});
    std::optional<ObjectCode> found = find_cached(same, CodeType::cubin, names, {.cache = &reopened});
    if (!found || !(*found == code)) {
        std::fprintf(stderr, "the stored code was not found again\n");
        return 1;
    }
    std::printf("found again without compiling: %zu-byte cubin\n", found->size());

    if (!gpu) {
        std::printf("skipped the launch: no CUDA driver or GPU on this machine\n");
        return 0;
    }
    Device device(0);
    Stream stream = device.create_stream();
    const unsigned n = 4096;
    std::vector<float> host(n, 1.5f), result(n);
    Buffer x = device.allocate(n * sizeof(float), stream);
    x.copy_from(host, stream);
    launch(stream, LaunchConfig{.grid = n / 256, .block = 256}, found->get_kernel("power<3>"), x,
           n);
    x.copy_to(result, stream);
    stream.sync();
    std::size_t wrong = 0;
    for (float v : result)
        if (v != 1.5f * 1.5f * 1.5f) ++wrong;
    std::printf("power<3> from the cache: %zu wrong\n", wrong);
    return wrong == 0 ? 0 : 1;
} catch (const cudacore::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
}
