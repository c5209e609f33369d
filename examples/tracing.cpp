// Tracing you can see: a cached compile that misses, the same compile again (a hit) and a
// launch, each inside a range of the program's own domain, with cudacore's own ranges and marks
// (domain "cudacore": compile, cache lookups per tier with hit and miss, load) inside them. Run
// it under Nsight Systems to see the timeline (docs/tracing.md):
//   nsys profile --trace=nvtx,cuda -o tracing ./example_tracing
//   nsys stats --report nvtx_sum tracing.nsys-rep
// or, to record only the launch (profiler::Scope around it):
//   nsys profile --capture-range=cudaProfilerApi --trace=nvtx,cuda -o launch ./example_tracing
// Without a profiler every range costs a test of one flag. cudacore's own example.
#include <cudacore/cudacore.hpp>
#include <nvtx3/nvtx3.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

// The program's domain and its category as NVTX3 tags: NVTX3 names the category for the tools
// that show names (once, when first asked).
struct ExampleDomain {
    static constexpr const char* name = "example";
};
struct PhaseCategory {
    static constexpr const char* name = "phase";
    static constexpr std::uint32_t id = 1;
};

static const char* kSource = R"(
extern "C" __global__ void scale(float* x, float factor, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= factor;
}
)";

int main() try {
    using namespace cudacore;
    namespace tracing = cudacore::tracing;
    // The program's own domain, with a category named for the tools that show names.
    static const tracing::Domain app(ExampleDomain::name);
    const std::uint32_t kPhase = nvtx3::named_category_in<ExampleDomain>::get<PhaseCategory>().get_id();
    const tracing::Color blue = tracing::Color::rgb(40, 90, 200);
    std::printf("NVTX tool attached: %s\n", tracing::tool_attached() ? "yes" : "no");

    // A fresh two-tier cache (memory over a disk folder made for this run): the first compile
    // misses in both tiers, the second hits in memory.
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/cudacore-tracing-XXXXXX";
    if (!mkdtemp(pattern.data())) {
        std::perror("mkdtemp");
        return 1;
    }
    const std::filesystem::path folder = pattern;
    struct RemoveFolder {
        std::filesystem::path path;
        ~RemoveFolder() {
            std::error_code ignored;
            std::filesystem::remove_all(path, ignored);
        }
    } remove_folder{folder};
    TieredProgramCache cache(
        {std::make_shared<MemoryProgramCache>(), std::make_shared<DiskProgramCache>(folder)});

    const bool gpu = system::driver_available() && system::device_count() > 0;
    const std::string arch = gpu ? Device(0).arch() : "sm_90";
    const ProgramOptions options{.name = "scale.cu", .arch = arch};

    ObjectCode first = [&] {
        const tracing::Range range(app, "first compile (a cache miss)", {.color = blue, .category = kPhase});
        Program program(kSource, SourceType::cxx, options);
        return compile_cached(program, CodeType::cubin, {}, {.cache = &cache});
    }();
    ObjectCode second = [&] {
        const tracing::Range range(app, "second compile (a cache hit)", {.color = blue, .category = kPhase});
        Program program(kSource, SourceType::cxx, options);
        return compile_cached(program, CodeType::cubin, {}, {.cache = &cache});
    }();
    tracing::mark(app, "cubin bytes", {.category = kPhase, .payload = first.size()});
    // Each cached compile looks up the program's header list, then the code: two lookups each.
    const CacheStats stats = cache.stats();
    const GlobalCacheStats global = cache_stats();
    std::printf("%zu-byte cubin; cache lookups: %llu hits, %llu misses; compiles: %llu\n",
                first.size(), (unsigned long long)stats.hits, (unsigned long long)stats.misses,
                (unsigned long long)global.compiles);
    if (!(first == second) || global.compiles != 1) {
        std::fprintf(stderr, "the second compile did not come from the cache\n");
        return 1;
    }

    if (!gpu) {
        std::printf("skipped the launch: no CUDA driver or GPU on this machine\n");
        return 0;
    }
    const unsigned n = 1 << 20;
    std::vector<float> host(n, 3.0f);
    {
        const tracing::Range range(app, "launch", {.color = blue, .category = kPhase, .payload = n});
        Device device(0);
        Stream stream = device.create_stream();
        Buffer x = device.allocate(n * sizeof(float), stream);
        x.copy_from(host, stream);
        // The first get_kernel loads the code: cudacore's "load" range.
        const Kernel scale = second.get_kernel("scale");
        // The profiler records from here to the end of the block (cuProfilerStart / Stop):
        // `nsys profile --capture-range=cudaProfilerApi` captures the launch and nothing before.
        const profiler::Scope recorded(device);
        launch(stream, LaunchConfig{.grid = n / 256, .block = 256}, scale, x, 2.0f, n);
        x.copy_to(host, stream);
        stream.sync();
    }
    std::size_t wrong = 0;
    for (float v : host)
        if (v != 6.0f) ++wrong;
    std::printf("scale of %u floats: %zu wrong\n", n, wrong);
    return wrong == 0 ? 0 : 1;
} catch (const cudacore::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
}
