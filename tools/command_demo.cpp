// `cudacore demo`: the main job, end to end, saying clearly what it skipped.
//
// Steps, each a function below: devices -> compile (NVRTC) -> link (two LTO-IR units, nvJitLink)
// -> cache (compile_cached through a DiskProgramCache, miss then hit) -> cache artefact (that
// cache exported to one file, imported into a fresh folder, found there with NVRTC called 0
// times) -> bundle (a kernel that
// includes <cuda/std/cmath> compiled from a header bundle file, no include path, the same cubin
// as from the toolkit's folder) -> fatbin (saxpy for sm_80, sm_90 and compute_90 in one call,
// nvFatbin) -> serialize (save, load, compare) -> load lazily -> SAXPY -> templated reduction ->
// driver log (a refused allocation in the driver's words) -> graph (SAXPY + reduction captured
// once, replayed 100 times) -> nvcc-style kernel (standard headers under NVRTC, a compile
// cancelled from another thread) -> slices (part of a buffer, and the driver's pointer
// attributes), then a one-line summary. Without a GPU
// the code is still compiled, linked, cached and serialized (for sm_90) and every GPU part prints
// SKIPPED. A failed check does not stop the later steps; it makes the exit code 1.
//
// Everything written to disk goes to a fresh private temporary directory that is removed at the
// end, so the demo never touches the user's program cache and always sees a miss, then a hit.
#include "commands.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/buffer_slice.hpp"
#include "cudacore/cache_activity.hpp"
#include "cudacore/cache_artefact.hpp"
#include "cudacore/cancellation.hpp"
#include "cudacore/compile_options.hpp"
#include "cudacore/compiler_flags.hpp"
#include "cudacore/cached_compile.hpp"
#include "cudacore/code_inspection.hpp"
#include "cudacore/device.hpp"
#include "cudacore/disk_program_cache.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/event.hpp"
#include "cudacore/fatbin_compile.hpp"
#include "cudacore/graph_builder.hpp"
#include "cudacore/graph_exec.hpp"
#include "cudacore/header_bundle.hpp"
#include "cudacore/kernel.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/linker.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/pointer_attributes.hpp"
#include "cudacore/legacy_pinned_memory_resource.hpp"
#include "cudacore/program.hpp"
#include "cudacore/system.hpp"

#include <stdlib.h>  // mkdtemp

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

namespace cudacore::cli {

namespace {

namespace fs = std::filesystem;

constexpr const char* kSaxpySource = R"(
extern "C" __global__ void saxpy(float a, const float* x, float* y, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
)";

// One partial sum per block; the host adds the partials.
constexpr const char* kReductionSource = R"(
template <typename T, int BlockSize>
__global__ void block_sum(const T* in, T* partial, size_t n) {
    __shared__ T shared[BlockSize];
    T sum = 0;
    for (size_t i = blockIdx.x * (size_t)BlockSize + threadIdx.x; i < n;
         i += (size_t)gridDim.x * BlockSize)
        sum += in[i];
    shared[threadIdx.x] = sum;
    __syncthreads();
    for (int stride = BlockSize / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) shared[threadIdx.x] += shared[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = shared[0];
}
)";
constexpr const char* kReductionName = "block_sum<float, 256>";

// Two relocatable units: the kernel calls a __device__ function that only the other unit
// defines, so nothing runs until the link resolves it (and LTO can inline it across units).
// Includes a toolkit header, so it compiles only where the headers are: from the toolkit's
// folder, or from a bundle of them.
constexpr const char* kBundledSource = R"(
#include <cuda/std/cmath>
extern "C" __global__ void bundled_abs_saxpy(float a, const float* x, float* y, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * cuda::std::fabs(x[i]) + y[i];
}
)";

constexpr const char* kLinkedKernelSource = R"(
extern __device__ float square_add(float a, float x, float y);
extern "C" __global__ void linked_square_add(float a, const float* x, float* y, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = square_add(a, x[i], y[i]);
}
)";
constexpr const char* kLinkedFunctionSource = R"(
__device__ float square_add(float a, float x, float y) { return a * x * x + y; }
)";
constexpr const char* kLinkedKernelName = "linked_square_add";

// A kernel written for nvcc: the standard headers it includes are cudacore's under NVRTC.
constexpr const char* kNvccStyleSource = R"(
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <type_traits>
template <class T>
__global__ void scaled(T* data, std::uint32_t n) {
    static_assert(std::is_floating_point<T>::value, "floating point only");
    const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] = std::fma(data[i], T(2), std::numeric_limits<T>::epsilon());
    if (i == 0 && data[0] < T(0)) std::printf("negative first element\n");
}
)";
constexpr const char* kNvccStyleName = "scaled<float>";

// 2^13 class template instantiations: seconds of NVRTC's front end, cancelled long before.
constexpr const char* kLongInstantiationSource = R"(
template <int D, int I> struct Tree { static constexpr long long v = Tree<D - 1, 2 * I>::v + Tree<D - 1, 2 * I + 1>::v; };
template <int I> struct Tree<0, I> { static constexpr long long v = I; };
__global__ void k(long long* o) { *o = Tree<12, 7>::v; }
)";

constexpr std::size_t kElements = std::size_t{1} << 20;

// A fresh directory only this user can enter (mkdtemp makes it 0700, as DiskProgramCache asks),
// removed with its contents on destruction.
class ScratchDirectory {
public:
    ScratchDirectory() {
        std::error_code error;
        const fs::path temporary = fs::temp_directory_path(error);
        if (error)
            throw Error("demo: no temporary directory (TMPDIR): " + error.message());
        std::string path = (temporary / "cudacore-demo-XXXXXX").string();
        if (mkdtemp(path.data()) == nullptr)
            throw Error("demo: mkdtemp(" + path + ") failed: " + std::strerror(errno));
        path_ = path;
    }
    ~ScratchDirectory() {
        std::error_code ignored;
        fs::remove_all(path_, ignored);
    }
    ScratchDirectory(const ScratchDirectory&) = delete;
    ScratchDirectory& operator=(const ScratchDirectory&) = delete;
    const fs::path& path() const noexcept { return path_; }

private:
    fs::path path_;
};

// What ran (and passed its checks), what was skipped and why, and what failed.
class Outcomes {
public:
    void passed(const std::string& part) { ran_.push_back(part); }
    void failed(const std::string& part) {
        std::erase(ran_, part);
        if (std::find(failed_.begin(), failed_.end(), part) == failed_.end())
            failed_.push_back(part);
    }
    void skipped(const std::string& part, const std::string& reason) {
        skipped_.emplace_back(part, reason);
    }
    // Records `part` as passed or failed; returns the word to print.
    const char* verify(const std::string& part, bool ok) {
        ok ? passed(part) : failed(part);
        return ok ? "OK" : "FAILED";
    }
    bool any_failed() const noexcept { return !failed_.empty(); }

    // "ran a, b; skipped c, d (why); e (why); all checks passed" (or "FAILED x, y").
    std::string summary() const {
        std::string line = "ran " + (ran_.empty() ? std::string("nothing") : join(ran_));
        // Skipped parts grouped by reason, reasons in order of first appearance.
        std::vector<std::string> reasons;
        for (const auto& [part, reason] : skipped_)
            if (std::find(reasons.begin(), reasons.end(), reason) == reasons.end())
                reasons.push_back(reason);
        for (std::size_t r = 0; r < reasons.size(); ++r) {
            std::vector<std::string> parts;
            for (const auto& [part, reason] : skipped_)
                if (reason == reasons[r]) parts.push_back(part);
            line += (r == 0 ? "; skipped " : "; ") + join(parts) + " (" + reasons[r] + ")";
        }
        line += failed_.empty() ? "; all checks passed" : "; FAILED " + join(failed_);
        return line;
    }

private:
    static std::string join(const std::vector<std::string>& parts) {
        std::string joined;
        for (const std::string& part : parts) joined += (joined.empty() ? "" : ", ") + part;
        return joined;
    }

    std::vector<std::string> ran_, failed_;
    std::vector<std::pair<std::string, std::string>> skipped_;
};

struct Demo {
    std::optional<Device> device;  // empty: no GPU, GPU parts are skipped for no_gpu_reason
    std::string no_gpu_reason;
    std::string arch;
    std::optional<ObjectCode> saxpy;
    std::optional<ObjectCode> reduction;
    std::optional<ScratchDirectory> scratch;  // made on first use, removed at the end
    Outcomes outcomes;

    const fs::path& scratch_path() {
        if (!scratch) scratch.emplace();
        return scratch->path();
    }
};

double milliseconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
}

std::vector<float> random_floats(std::size_t n, unsigned seed) {
    std::mt19937 random(seed);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<float> values(n);
    for (float& value : values) value = uniform(random);
    return values;
}

// True when there is a GPU; otherwise prints "SKIPPED: <message>" and records `part` skipped.
bool gpu_for(Demo& demo, const std::string& part, const char* message) {
    if (demo.device) return true;
    std::printf("SKIPPED: %s\n", message);
    demo.outcomes.skipped(part, demo.no_gpu_reason);
    return false;
}

// True when `code` was made; otherwise says `part` is skipped because `producer` failed.
bool made_by(Demo& demo, const std::optional<ObjectCode>& code, const std::string& part,
             const std::string& producer) {
    if (code) return true;
    std::printf("SKIPPED: %s failed\n", producer.c_str());
    demo.outcomes.skipped(part, producer + " failed");
    return false;
}

// Launches `kernel(a, x, y, n)` on random x and y, timed by events, and compares y with
// expected(a, x, y) computed on the CPU. Prints one line; true when every element agrees.
bool launch_and_compare(const Device& device, const Kernel& kernel,
                        float (*expected)(float, float, float)) {
    Stream stream = device.create_stream();
    const std::vector<float> x = random_floats(kElements, 1);
    const std::vector<float> y = random_floats(kElements, 2);
    Buffer dx = device.allocate(kElements * sizeof(float), stream);
    Buffer dy = device.allocate(kElements * sizeof(float), stream);
    dx.copy_from(x, stream);
    dy.copy_from(y, stream);

    const float a = 2.0f;
    TypedKernel<void(float, const float*, float*, std::size_t)> typed(kernel);
    const LaunchConfig config{.grid = unsigned((kElements + 255) / 256), .block = 256};
    Event start = stream.record(EventOptions{.timing_enabled = true});
    launch(stream, config, typed, a, static_cast<const float*>(dx.data()),
           static_cast<float*>(dy.data()), kElements);
    Event end = stream.record(EventOptions{.timing_enabled = true});
    std::vector<float> result(kElements);
    dy.copy_to(result, stream);
    stream.sync();

    std::size_t wrong = 0;
    for (std::size_t i = 0; i < kElements; ++i)
        if (std::fabs(result[i] - expected(a, x[i], y[i])) > 1e-5f) ++wrong;
    std::printf("%zu elements: kernel time %.3f ms (events); %zu mismatches against the CPU: %s\n",
                kElements, (end - start).count(), wrong, wrong == 0 ? "OK" : "FAILED");
    return wrong == 0;
}

float saxpy_on_cpu(float a, float x, float y) { return a * x + y; }
float square_add_on_cpu(float a, float x, float y) { return a * x * x + y; }
float abs_saxpy_on_cpu(float a, float x, float y) { return a * std::fabs(x) + y; }

void step_devices(Demo& demo) {
    std::printf("== devices\n");
    if (!system::driver_available()) {
        demo.no_gpu_reason = "no CUDA driver on this machine";
    } else if (system::device_count() == 0) {
        demo.no_gpu_reason = "the driver reports no device";
    } else {
        for (const Device& device : system::devices())
            std::printf("device %d: %s (%s)\n", device.ordinal(), device.name().c_str(),
                        device.arch().c_str());
        demo.device.emplace(0);
        demo.outcomes.passed("devices");
    }
    if (!demo.device) {
        std::printf("SKIPPED: %s; GPU steps are skipped\n", demo.no_gpu_reason.c_str());
        demo.outcomes.skipped("devices", demo.no_gpu_reason);
    }
    demo.arch = demo.device ? demo.device->arch() : "sm_90";
}

void step_compile(Demo& demo) {
    std::printf("== compile (NVRTC, cubin for %s%s)\n", demo.arch.c_str(),
                demo.device ? "" : ", no GPU needed");
    ProgramOptions options;
    options.arch = demo.arch;

    auto start = std::chrono::steady_clock::now();
    options.name = "saxpy";
    demo.saxpy = Program(kSaxpySource, SourceType::cxx, options).compile(CodeType::cubin);
    std::printf("saxpy: %zu bytes in %.1f ms\n", demo.saxpy->size(), milliseconds_since(start));

    start = std::chrono::steady_clock::now();
    options.name = "reduction";
    demo.reduction = Program(kReductionSource, SourceType::cxx, options)
                         .compile(CodeType::cubin, {kReductionName});
    std::printf("reduction: %zu bytes in %.1f ms; %s -> %s\n", demo.reduction->size(),
                milliseconds_since(start), kReductionName,
                demo.reduction->lowered_name(kReductionName).c_str());
    demo.outcomes.passed("compile");
}

void step_link(Demo& demo) {
    std::printf("== link (two LTO-IR units -> one cubin for %s)\n", demo.arch.c_str());
    ProgramOptions options;
    options.arch = demo.arch;
    options.relocatable_device_code = true;
    auto start = std::chrono::steady_clock::now();
    options.name = "linked_kernel";
    const ObjectCode kernel_unit =
        Program(kLinkedKernelSource, SourceType::cxx, options).compile(CodeType::ltoir);
    options.name = "linked_function";
    const ObjectCode function_unit =
        Program(kLinkedFunctionSource, SourceType::cxx, options).compile(CodeType::ltoir);
    std::printf("LTO-IR: kernel unit %zu bytes + device-function unit %zu bytes in %.1f ms\n",
                kernel_unit.size(), function_unit.size(), milliseconds_since(start));

    LinkerOptions link_options;
    link_options.name = "linked";
    link_options.arch = demo.arch;
    link_options.link_time_optimization = true;
    Linker linker({kernel_unit, function_unit}, link_options);
    start = std::chrono::steady_clock::now();
    const ObjectCode linked = linker.link(CodeType::cubin);
    std::printf("linked by %s (-lto) into a %s of %zu bytes in %.1f ms\n",
                linker.backend().c_str(), std::string(to_string(linked.code_type())).c_str(),
                linked.size(), milliseconds_since(start));
    // The link is right when the cubin holds the kernel, for the arch asked for.
    const CodeInfo info = inspect_code(linked);
    const bool has_kernel = std::find(info.kernels.begin(), info.kernels.end(),
                                      kLinkedKernelName) != info.kernels.end();
    std::printf("cubin for %s holds %s: %s\n", info.arch.c_str(), kLinkedKernelName,
                demo.outcomes.verify("link", info.type == CodeType::cubin &&
                                                 info.arch == demo.arch && has_kernel));

    std::printf("-- launch the linked kernel (%s)\n", kLinkedKernelName);
    if (!gpu_for(demo, "linked launch", "launching needs a GPU")) return;
    const bool ok =
        launch_and_compare(*demo.device, linked.get_kernel(kLinkedKernelName), square_add_on_cpu);
    demo.outcomes.verify("linked launch", ok);
}

void step_cache(Demo& demo) {
    std::printf("== cache (compile_cached through a DiskProgramCache)\n");
    const fs::path directory = demo.scratch_path() / "cache";
    DiskProgramCache cache(directory);
    std::printf("fresh cache directory %s (removed at the end)\n", directory.c_str());

    ProgramOptions options;
    options.arch = demo.arch;
    options.name = "saxpy";
    Program program(kSaxpySource, SourceType::cxx, options);

    // What one compile_cached call was, told by the cache's own counters: a miss stores the
    // code without a hit (lookups happen twice before compiling, so misses may grow by more
    // than one); a hit stores nothing and counts no miss (one hit: the code, under its key).
    auto timed_call = [&](CacheStats& before) {
        const auto start = std::chrono::steady_clock::now();
        ObjectCode code = compile_cached(program, CodeType::cubin, {}, {.cache = &cache});
        const double ms = milliseconds_since(start);
        const CacheStats after = cache.stats();
        const std::uint64_t hits = after.hits - before.hits, misses = after.misses - before.misses,
                            stored = after.insertions - before.insertions;
        before = after;
        const char* kind = hits == 0 && misses > 0 && stored >= 1   ? "miss"
                           : hits >= 1 && misses == 0 && stored == 0 ? "hit"
                                                                     : "neither hit nor miss";
        return std::make_tuple(std::move(code), ms, std::string(kind));
    };
    CacheStats stats = cache.stats();
    auto [miss, miss_ms, first] = timed_call(stats);
    std::printf("first call: %s in %.1f ms (cache now %llu entry, %llu bytes on disk)\n",
                first.c_str(), miss_ms,
                static_cast<unsigned long long>(stats.entries),
                static_cast<unsigned long long>(stats.bytes));
    auto [hit, hit_ms, second] = timed_call(stats);
    std::printf("second call: %s in %.2f ms; speed-up %.0fx\n", second.c_str(), hit_ms,
                miss_ms / std::max(hit_ms, 1e-6));
    // The cache's code is the code a plain compile gives, byte for byte (the headers a miss
    // reads are learned by a front-end pass of their own, never by a flag on this compile).
    Program plain_program(kSaxpySource, SourceType::cxx, options);
    const ObjectCode plain = plain_program.compile(CodeType::cubin);
    const bool ok = first == "miss" && second == "hit" && hit == miss && hit.code() == plain.code();
    std::printf("miss then hit, hit == miss == a plain compile (bytes, %zu): %s\n", hit.size(),
                demo.outcomes.verify("cache", ok));
}

// The cache step's folder as one artefact file, imported into a fresh folder as an application
// ships its warmed cache: the program is found there without a compile.
void step_cache_artefact(Demo& demo) {
    std::printf("== cache artefact (export_cache_artefact, import_cache_artefact)\n");
    const fs::path artefact = demo.scratch_path() / "warm.ccart";
    DiskProgramCache warmed(demo.scratch_path() / "cache");
    const CacheArtefactExport exported = export_cache_artefact(artefact, warmed);
    std::printf("exported %llu entries of the cache step's folder: %llu bytes\n",
                static_cast<unsigned long long>(exported.entries),
                static_cast<unsigned long long>(exported.bytes));
    DiskProgramCache fresh(demo.scratch_path() / "cache-imported");
    const auto start = std::chrono::steady_clock::now();
    const CacheArtefactImport imported = import_cache_artefact(fresh, artefact);
    std::printf("imported %llu entries into a fresh folder in %.2f ms (made with NVRTC %s)\n",
                static_cast<unsigned long long>(imported.imported), milliseconds_since(start),
                imported.origin.nvrtc_version.c_str());

    ProgramOptions options;
    options.arch = demo.arch;
    options.name = "saxpy";
    Program program(kSaxpySource, SourceType::cxx, options);
    const std::uint64_t compiles_before = cache_stats().compiles;
    const ObjectCode code = compile_cached(program, CodeType::cubin, {}, {.cache = &fresh});
    const std::uint64_t compiles = cache_stats().compiles - compiles_before;
    const std::optional<ObjectCode> original = find_cached(program, CodeType::cubin, {}, {.cache = &warmed});
    const bool ok = imported.imported == exported.entries && exported.entries > 0 && compiles == 0 &&
                    original && *original == code;
    std::printf("compile_cached with the imported cache: NVRTC called %llu times, code == the "
                "exported code: %s\n",
                static_cast<unsigned long long>(compiles), demo.outcomes.verify("cache artefact", ok));
}

void step_bundle(Demo& demo) {
    std::printf("== bundle (headers carried in memory: no include path, no toolkit on disk)\n");
    std::vector<fs::path> toolkit_folders;
    for (const std::string& dir : toolkit_include_dirs()) toolkit_folders.emplace_back(dir);
    const fs::path path = demo.scratch_path() / "cuda_std.ccbundle";
    HeaderBundle::from_include_folders({"cuda/std/cmath"}, toolkit_folders, "cuda_std",
                                       {.archs = {demo.arch}})
        .save(path);
    const HeaderBundle bundle = HeaderBundle::load(path);
    std::printf("<cuda/std/cmath> and what it includes: %zu headers, %.1f MiB, %ju bytes as a file\n",
                bundle.size(), static_cast<double>(bundle.content_size()) / (1 << 20),
                static_cast<std::uintmax_t>(fs::file_size(path)));

    ProgramOptions options;
    options.arch = demo.arch;
    options.name = "bundled_abs_saxpy";
    // In memory on both sides, with the same flags: with pch unset the bundle would be written to
    // a folder of the cache and compiled with automatic PCH, and the demo leaves no cache behind.
    options.pch = false;
    const ObjectCode from_toolkit =
        Program(kBundledSource, SourceType::cxx, options).compile(CodeType::cubin);
    options.header_bundles = {bundle};
    const auto start = std::chrono::steady_clock::now();
    const ObjectCode from_bundle =
        Program(kBundledSource, SourceType::cxx, options).compile(CodeType::cubin);
    const bool same = from_bundle.code() == from_toolkit.code();
    std::printf("compiled from the bundle in %.1f ms; cubin equal to the toolkit folder's: %s\n",
                milliseconds_since(start), demo.outcomes.verify("bundle", same));

    std::printf("-- launch the kernel compiled from the bundle\n");
    if (!gpu_for(demo, "bundled launch", "launching needs a GPU")) return;
    const Kernel kernel = from_bundle.get_kernel("bundled_abs_saxpy");
    demo.outcomes.verify("bundled launch",
                         launch_and_compare(*demo.device, kernel, abs_saxpy_on_cpu));
}

void step_fatbin(Demo& demo) {
    std::printf("== fatbin (saxpy for sm_80, sm_90 and compute_90 PTX in one call, one artefact "
                "for a fleet)\n");
    std::optional<ObjectCode> built;
    const auto start = std::chrono::steady_clock::now();
    try {
        const Program program(kSaxpySource, SourceType::cxx, {.name = "saxpy_fleet"});
        built = compile_fatbin(program, {"sm_80", "sm_90", "compute_90"});
    } catch (const LoaderError& e) {  // nvFatbin is optional, like a toolkit on a GPU machine
        std::printf("SKIPPED: %s\n", e.what());
        demo.outcomes.skipped("fatbin", "nvFatbin not found");
        return;
    }
    const ObjectCode& fatbin = *built;
    const std::vector<FatbinEntry> images = inspect_code(fatbin).entries;
    std::printf("one fatbin of %zu bytes in %.1f ms (nvFatbin), holding:\n", fatbin.size(),
                milliseconds_since(start));
    std::vector<std::string> held;
    for (const FatbinEntry& image : images) {
        std::printf("  %-4s %-10s %6zu bytes%s\n", image.kind.c_str(), image.arch.c_str(), image.size,
                    image.compressed ? " (compressed)" : "");
        held.push_back(image.kind + ":" + image.arch);
    }
    std::sort(held.begin(), held.end());
    const bool ok = held == std::vector<std::string>{"elf:sm_80", "elf:sm_90", "ptx:compute_90"};
    std::printf("a cubin per arch and PTX for newer GPUs: %s\n", demo.outcomes.verify("fatbin", ok));

    std::printf("-- launch saxpy from the fatbin (the driver picks the device's image)\n");
    if (!gpu_for(demo, "fatbin launch", "launching needs a GPU")) return;
    const Kernel kernel = fatbin.get_kernel("saxpy");
    std::printf("%s runs the image of binary version %d\n", demo.arch.c_str(),
                kernel.binary_version(*demo.device));
    demo.outcomes.verify("fatbin launch", launch_and_compare(*demo.device, kernel, saxpy_on_cpu));
}

void step_driver_log(Demo& demo) {
    std::printf("== driver log (why a driver call failed, in the driver's words: CUDA 12.9+)\n");
    if (!gpu_for(demo, "driver log", "a failing driver call needs a GPU")) return;
    Stream stream = demo.device->create_stream();
    try {
        Buffer huge = demo.device->allocate(std::size_t{1} << 50, stream);  // 1 PiB: refused
        std::printf("a 1 PiB allocation succeeded: %s\n", demo.outcomes.verify("driver log", false));
    } catch (const DriverError& error) {
        std::printf("a 1 PiB allocation: %s\n", error.what());
        // Drivers before 12.9 keep no log: the message is then the status alone.
        const bool has_log = system::driver_version() < 12090 || !error.driver_log().empty();
        std::printf("%zu line(s) from the driver's log, quoted in the message: %s\n",
                    error.driver_log().size(), demo.outcomes.verify("driver log", has_log));
    }
}

void step_serialize(Demo& demo) {
    std::printf("== serialize (saxpy ObjectCode -> file -> ObjectCode)\n");
    if (!made_by(demo, demo.saxpy, "serialize", "compile")) return;
    const ObjectCode& original = *demo.saxpy;
    const std::string bytes = original.serialize();
    const fs::path path = demo.scratch_path() / "saxpy.ccobj";
    original.save(path);
    std::printf("serialize(): %zu code bytes -> %zu bytes; save() wrote %ju bytes to %s\n",
                original.size(), bytes.size(), static_cast<std::uintmax_t>(fs::file_size(path)),
                path.filename().c_str());
    const ObjectCode loaded = ObjectCode::from_saved(path);
    const bool equal = loaded == original && ObjectCode::deserialize(bytes) == original;
    std::printf("ObjectCode::from_saved(path) == original (%s \"%s\", %zu bytes): %s\n",
                std::string(to_string(loaded.code_type())).c_str(), loaded.name().c_str(),
                loaded.size(),
                demo.outcomes.verify("serialize", equal));

    std::printf("-- launch saxpy from the deserialized code\n");
    if (!gpu_for(demo, "deserialized launch", "launching needs a GPU")) return;
    const bool was_loaded = loaded.is_loaded();
    const Kernel kernel = loaded.get_kernel("saxpy");
    std::printf("loaded before first get_kernel: %s; after: %s\n", was_loaded ? "yes" : "no",
                loaded.is_loaded() ? "yes" : "no");
    const bool ok = launch_and_compare(*demo.device, kernel, saxpy_on_cpu);
    demo.outcomes.verify("deserialized launch", ok && !was_loaded && loaded.is_loaded());
}

void step_load(Demo& demo) {
    std::printf("== load (lazily, on first get_kernel)\n");
    if (!gpu_for(demo, "load", "loading needs a GPU")) return;
    if (!made_by(demo, demo.saxpy, "load", "compile")) return;
    const bool was_loaded = demo.saxpy->is_loaded();
    std::printf("saxpy loaded before first use: %s\n", was_loaded ? "yes" : "no");
    auto start = std::chrono::steady_clock::now();
    demo.saxpy->get_kernel("saxpy");
    const double first = milliseconds_since(start);
    start = std::chrono::steady_clock::now();
    demo.saxpy->get_kernel("saxpy");
    const double second = milliseconds_since(start);
    const bool is_loaded = demo.saxpy->is_loaded();
    std::printf("first get_kernel (loads): %.3f ms; second (cached): %.6f ms; loaded now: %s: %s\n",
                first, second, is_loaded ? "yes" : "no",
                demo.outcomes.verify("load", !was_loaded && is_loaded));
}

void step_saxpy(Demo& demo) {
    std::printf("== saxpy on %zu random floats\n", kElements);
    if (!gpu_for(demo, "saxpy", "launching needs a GPU")) return;
    if (!made_by(demo, demo.saxpy, "saxpy", "compile")) return;
    const bool ok =
        launch_and_compare(*demo.device, demo.saxpy->get_kernel("saxpy"), saxpy_on_cpu);
    demo.outcomes.verify("saxpy", ok);
}

void step_reduction(Demo& demo) {
    std::printf("== reduction (%s) on %zu random floats\n", kReductionName, kElements);
    if (!gpu_for(demo, "reduction", "launching needs a GPU")) return;
    if (!made_by(demo, demo.reduction, "reduction", "compile")) return;
    const Device& device = *demo.device;
    Stream stream = device.create_stream();
    const std::vector<float> values = random_floats(kElements, 3);
    const unsigned blocks = 1024;
    Buffer input = device.allocate(kElements * sizeof(float), stream);
    Buffer partial = device.allocate(blocks * sizeof(float), stream);
    input.copy_from(values, stream);

    Kernel kernel = demo.reduction->get_kernel(kReductionName);
    Event start = stream.record(EventOptions{.timing_enabled = true});
    launch(stream, LaunchConfig{.grid = blocks, .block = 256}, kernel, input, partial, kElements);
    Event end = stream.record(EventOptions{.timing_enabled = true});
    std::vector<float> partials(blocks);
    partial.copy_to(partials, stream);
    stream.sync();

    double gpu = 0, cpu = 0;
    for (float p : partials) gpu += p;
    for (float v : values) cpu += v;
    const bool ok = std::fabs(gpu - cpu) <= 1e-3 * (1.0 + std::fabs(cpu));
    std::printf("kernel time %.3f ms (events); sum %.4f, CPU %.4f: %s\n", (end - start).count(),
                gpu, cpu, demo.outcomes.verify("reduction", ok));
}

// SAXPY then the reduction, captured once into a graph and replayed: each replay restores y,
// computes y = a * x + y and sums y into pinned host memory, so the last replay's sum checks all.
void step_graph(Demo& demo) {
    constexpr int replays = 100;
    std::printf("== graph (saxpy + reduction captured once, replayed %d times)\n", replays);
    if (!gpu_for(demo, "graph", "capturing and replaying a graph needs a GPU")) return;
    if (!made_by(demo, demo.saxpy, "graph", "compile")) return;
    if (!made_by(demo, demo.reduction, "graph", "compile")) return;
    const Device& device = *demo.device;
    Stream stream = device.create_stream();
    const std::vector<float> x = random_floats(kElements, 4);
    const std::vector<float> y = random_floats(kElements, 5);
    const unsigned blocks = 1024;
    Buffer dx = device.allocate(kElements * sizeof(float), stream);
    Buffer dy0 = device.allocate(kElements * sizeof(float), stream);
    Buffer dy = device.allocate(kElements * sizeof(float), stream);
    Buffer partial = device.allocate(blocks * sizeof(float), stream);
    auto pinned = std::make_shared<LegacyPinnedMemoryResource>(device);
    Buffer partials = pinned->allocate(blocks * sizeof(float), stream);
    dx.copy_from(x, stream);
    dy0.copy_from(y, stream);
    stream.sync();

    const float a = 2.0f;
    const Kernel saxpy = demo.saxpy->get_kernel("saxpy");
    const Kernel reduction = demo.reduction->get_kernel(kReductionName);
    const auto capture_start = std::chrono::steady_clock::now();
    GraphBuilder builder = stream.begin_capture();
    dy.copy_from(dy0, builder);
    launch(builder, LaunchConfig{.grid = unsigned((kElements + 255) / 256), .block = 256}, saxpy,
           a, dx, dy, kElements);
    launch(builder, LaunchConfig{.grid = blocks, .block = 256}, reduction, dy, partial, kElements);
    partial.copy_to(partials, builder);
    const Graph graph = builder.end();
    const GraphExec exec = graph.instantiate({.upload_stream = stream});
    const double capture_ms = milliseconds_since(capture_start);

    Event start = stream.record(EventOptions{.timing_enabled = true});
    for (int replay = 0; replay < replays; ++replay) exec.launch(stream);
    Event end = stream.record(EventOptions{.timing_enabled = true});
    stream.sync();

    double gpu = 0, cpu = 0;
    for (float p : partials.span<float>()) gpu += p;
    for (std::size_t i = 0; i < kElements; ++i) cpu += a * x[i] + y[i];
    const bool ok = std::fabs(gpu - cpu) <= 1e-3 * (1.0 + std::fabs(cpu));
    std::printf("%zu nodes; capture + instantiate %.3f ms; %d replays %.3f ms (%.3f ms each, "
                "events); sum %.4f, CPU %.4f: %s\n",
                graph.node_count(), capture_ms, replays, (end - start).count(),
                (end - start).count() / replays, gpu, cpu, demo.outcomes.verify("graph", ok));
}

// A kernel written for nvcc compiled by NVRTC through cudacore's standard headers, then a long
// template instantiation cancelled from another thread (a server giving up on a request).
void step_nvcc_style(Demo& demo) {
    std::printf("== nvcc-style kernel (standard headers under NVRTC; a compile cancelled)\n");
    ProgramOptions options;
    options.arch = demo.arch;
    options.name = "nvcc_style";
    options.std_headers = true;  // cudacore's <cmath>, <cstdint>... under NVRTC
    // Their folder is made under the cache folder: the demo's own, never the user's.
    ::setenv("CUDACORE_CACHE_DIR", (demo.scratch_path() / "cache-folder").c_str(), 1);
    const ObjectCode code =
        Program(kNvccStyleSource, SourceType::cxx, options).compile(CodeType::cubin, {kNvccStyleName});
    std::printf("%s with <cmath>, <cstdint>, <cstdio>, <limits>, <type_traits>: %zu bytes\n",
                kNvccStyleName, code.size());
    options.name = "long_instantiation";
    CancellationToken token;
    const auto start = std::chrono::steady_clock::now();
    std::thread canceller([token] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        token.cancel();
    });
    bool cancelled = false;
    try {
        Program(kLongInstantiationSource, SourceType::cxx, options)
            .compile(CodeType::cubin, {}, CompileOptions{.cancellation = token});
    } catch (const CompileCancelled& e) {
        cancelled = e.nvrtc_status() == NVRTC_ERROR_CANCELLED;
    }
    canceller.join();
    std::printf("a long template instantiation cancelled at 100 ms returned at %.0f ms: %s\n",
                milliseconds_since(start), demo.outcomes.verify("nvcc-style", cancelled));
}

// Part of a buffer as a Buffer (no wrap_unowned of an address), and what the driver knows of it.
void step_slices(Demo& demo) {
    std::printf("== slices and pointer attributes\n");
    if (!gpu_for(demo, "slices", "slices of device memory need a GPU")) return;
    Stream stream = demo.device->create_stream();
    Buffer whole = demo.device->allocate(1 << 16, stream);
    whole.fill_byte(0, stream);
    const Buffer middle = slice(whole, 4096, 8192);
    middle.fill_byte(7, stream);
    std::vector<std::uint8_t> back(whole.size());
    whole.copy_to(back, stream);
    stream.sync();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < back.size(); ++i)
        wrong += back[i] != ((i >= 4096 && i < 4096 + 8192) ? 7 : 0);
    const PointerAttributes where = pointer_attributes(middle.handle());
    const bool known = where.memory_type == MemoryType::device &&
                       where.device_ordinal == demo.device->ordinal() &&
                       where.range_start <= whole.handle() &&
                       middle.handle() + middle.size() <= where.range_start + where.range_size;
    std::printf("bytes [4096, 12288) of a 64 KiB buffer filled through a slice: %zu wrong; "
                "the driver says: %s\n",
                wrong, where.description().c_str());
    demo.outcomes.verify("slices", wrong == 0 && known);
}

// Runs one step; an exception fails that step (with its message) and the demo goes on.
void run_step(Demo& demo, const char* name, void (*step)(Demo&)) {
    try {
        step(demo);
    } catch (const std::exception& e) {
        std::printf("FAILED: %s\n", e.what());
        demo.outcomes.failed(name);
    }
}

}  // namespace

void add_demo_command(CLI::App& app) {
    auto* command = app.add_subcommand("demo", "Run the end-to-end demo");
    command->callback([] {
        Demo demo;
        run_step(demo, "devices", step_devices);
        run_step(demo, "compile", step_compile);
        run_step(demo, "link", step_link);
        run_step(demo, "cache", step_cache);
        run_step(demo, "cache artefact", step_cache_artefact);
        run_step(demo, "bundle", step_bundle);
        run_step(demo, "fatbin", step_fatbin);
        run_step(demo, "serialize", step_serialize);
        run_step(demo, "load", step_load);
        run_step(demo, "saxpy", step_saxpy);
        run_step(demo, "reduction", step_reduction);
        run_step(demo, "driver log", step_driver_log);
        run_step(demo, "graph", step_graph);
        run_step(demo, "nvcc-style", step_nvcc_style);
        run_step(demo, "slices", step_slices);
        demo.scratch.reset();  // the temporary directory goes before the summary is printed
        std::printf("summary: %s\n", demo.outcomes.summary().c_str());
        std::fflush(stdout);
        if (demo.outcomes.any_failed()) throw CLI::RuntimeError(1);
    });
}

}  // namespace cudacore::cli
