// Where cudacore's time over the raw calls goes. Every driver entry point in cudacore's table is
// wrapped with a counter and a clock; each operation then runs the raw way and the cudacore way,
// and the table shows, per operation: the wall time, the time inside the driver, the rest (our
// own code for cudacore; the loop for raw), and which driver calls each side made per operation.
// A diagnostic beside the ratio benchmarks: the wrappers add their own few nanoseconds per call
// to both sides, so read the split, not the absolute figures.
#include "bench_support.hpp"
#include "pointer_attribute_list.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/event.hpp"
#include "cudacore/graph.hpp"
#include "cudacore/graph_builder.hpp"
#include "cudacore/graph_exec.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/device_memory_resource.hpp"
#include "cudacore/memory_resource.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/pointer_attributes.hpp"
#include "cudacore/program.hpp"
#include "loader/driver_api.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace {

using namespace cudacore;
using Clock = std::chrono::steady_clock;

struct CallCount {
    std::uint64_t calls = 0;
    std::uint64_t ns = 0;
};
// Per entry point, filled by the wrappers for calls made on the timing thread (cudacore's
// release worker may call the driver too: not counted).
std::map<std::string, CallCount>& counts() {
    static std::map<std::string, CallCount> table;
    return table;
}
std::uint64_t driver_ns = 0;
thread_local bool timing_thread = false;

std::uint64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

// One wrapper per entry point: calls the original and adds its time to the entry's count.
template <class Function>
struct Wrapper;
template <class Result, class... Args>
struct Wrapper<Result(CUDAAPI*)(Args...)> {
    template <Result(CUDAAPI** original)(Args...), CallCount** count>
    static Result CUDAAPI call(Args... args) {
        if (!timing_thread) return (*original)(args...);
        const std::uint64_t start = now_ns();
        const Result result = (*original)(args...);
        const std::uint64_t spent = now_ns() - start;
        ++(*count)->calls;
        (*count)->ns += spent;
        driver_ns += spent;
        return result;
    }
};

#define CUDACORE_DRIVER_FUNCTION(name, version)              \
    PFN_##name##_v##version original_##name = nullptr; \
    CallCount* count_##name = nullptr;
#include "loader/driver_functions.inc"
#undef CUDACORE_DRIVER_FUNCTION

void wrap_driver_table() {
    // The table is built once and read through a const pointer; the bench rewrites its entries
    // before timing anything, while no other thread calls the driver.
    timing_thread = true;
    auto& api = const_cast<detail::DriverApi&>(detail::driver());
#define CUDACORE_DRIVER_FUNCTION(name, version)                                                  \
    if (api.name) {                                                                          \
        original_##name = api.name;                                                          \
        count_##name = &counts()[#name];                                                     \
        api.name = &Wrapper<PFN_##name##_v##version>::call<&original_##name, &count_##name>; \
    }
#include "loader/driver_functions.inc"
#undef CUDACORE_DRIVER_FUNCTION
}

struct Split {
    double wall_ns = 0;
    double driver_ns = 0;
    std::map<std::string, double> calls;  // per operation
};

// Runs `batch` (which performs `per_batch` operations) `batches` times after a warm-up; the
// split of the fastest batch by wall time, per operation.
Split measure(int batches, int per_batch, const std::function<void()>& batch,
              const std::function<void()>& after = [] {}) {
    for (int i = 0; i < 3; ++i) {
        batch();
        after();
    }
    Split best;
    best.wall_ns = 1e300;
    for (int i = 0; i < batches; ++i) {
        for (auto& [name, count] : counts()) count = {};
        driver_ns = 0;
        const std::uint64_t start = now_ns();
        batch();
        const std::uint64_t wall = now_ns() - start;
        Split split;
        split.wall_ns = double(wall) / per_batch;
        split.driver_ns = double(driver_ns) / per_batch;
        for (const auto& [name, count] : counts())
            if (count.calls) split.calls[name] = double(count.calls) / per_batch;
        after();
        if (split.wall_ns < best.wall_ns) best = split;
    }
    return best;
}

void print(const std::string& operation, const Split& raw, const Split& ours,
           const char* ours_name = "cudacore") {
    std::printf("%s\n", operation.c_str());
    for (const auto& [side, split] : {std::pair<const char*, const Split&>{"raw", raw}, {ours_name, ours}}) {
        std::printf("  %-9s wall %8.1f ns  driver %8.1f ns  rest %7.1f ns  calls:", side, split.wall_ns,
                    split.driver_ns, split.wall_ns - split.driver_ns);
        for (const auto& [name, calls] : split.calls) std::printf(" %s x%.2g", name.c_str(), calls);
        std::printf("\n");
    }
    std::printf("  %s over raw: wall %+.1f ns, driver %+.1f ns, rest %+.1f ns\n\n", ours_name,
                ours.wall_ns - raw.wall_ns,
                ours.driver_ns - raw.driver_ns,
                (ours.wall_ns - ours.driver_ns) - (raw.wall_ns - raw.driver_ns));
}

}  // namespace

int main() {
    if (const char* reason = bench::gpu_missing_reason(); *reason) {
        std::printf("overhead_split: skipped, %s\n", reason);
        return 0;
    }
    bench::GpuFixture fixture;
    const Device& device = *fixture.device;
    const Stream& stream = *fixture.stream;
    const ObjectCode code = fixture.compile(R"(extern "C" __global__ void empty() {})", "overhead_split");
    const Kernel empty = code.get_kernel("empty");
    const auto function = reinterpret_cast<CUfunction>(empty.handle());
    const CUstream raw_stream = stream.handle();
    wrap_driver_table();
    const auto& api = detail::driver();
    constexpr int batches = 200;

    {
        constexpr int n = 64;
        std::vector<CUevent> raw_events(n);
        std::vector<Event> events;
        events.reserve(n);
        const Split raw = measure(
            batches, n, [&] { for (auto& event : raw_events) api.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING); },
            [&] { for (CUevent event : raw_events) api.cuEventDestroy(event); });
        const Split ours = measure(
            batches, n, [&] { for (int i = 0; i < n; ++i) events.push_back(device.create_event()); },
            [&] { events.clear(); });
        print("event create (timing disabled)", raw, ours);
    }

    auto resource = std::dynamic_pointer_cast<DeviceMemoryResource>(device.memory_resource());
    if (resource) resource->set_release_threshold(UINT64_MAX);
    constexpr int allocations = 32;
    // 1 MiB allocated from `pool` by its handle and freed, `allocations` times, the raw way.
    auto raw_pool_batch = [&](CUmemoryPool pool) {
        return measure(batches, allocations, [&] {
            for (int i = 0; i < allocations; ++i) {
                CUdeviceptr pointer = 0;
                api.cuMemAllocFromPoolAsync(&pointer, 1 << 20, pool, raw_stream);
                api.cuMemFreeAsync(pointer, raw_stream);
            }
        }, [&] { stream.sync(); });
    };
    {
        constexpr int n = allocations;
        const Split raw = measure(batches, n, [&] {
            for (int i = 0; i < n; ++i) {
                CUdeviceptr pointer = 0;
                api.cuMemAllocAsync(&pointer, 1 << 20, raw_stream);
                api.cuMemFreeAsync(pointer, raw_stream);
            }
        }, [&] { stream.sync(); });
        const Split ours = measure(batches, n, [&] {
            for (int i = 0; i < n; ++i) {
                Buffer buffer = device.allocate(1 << 20, stream);
                buffer.close(stream);
            }
        }, [&] { stream.sync(); });
        print("allocate + free 1 MiB, default pool", raw, ours);
        // The same pool named by its handle (cuMemAllocFromPoolAsync, as cudacore's resource
        // allocates) against cuMemAllocAsync: what the driver alone charges for the difference.
        const Split by_handle = raw_pool_batch(resource ? resource->pool() : nullptr);
        print("allocate + free 1 MiB, default pool, from its handle", raw, by_handle, "by handle");
        // Dropped instead of closed: destruction first asks whether someone reset the device
        // (one cuCtxGetId), which an explicit close() leaves to the caller.
        const Split dropped = measure(batches, n, [&] {
            for (int i = 0; i < n; ++i) Buffer buffer = device.allocate(1 << 20, stream);
        }, [&] { stream.sync(); });
        print("allocate + drop 1 MiB (no close), default pool", raw, dropped, "dropped");
    }
    {
        constexpr int n = allocations;
        auto owned = DeviceMemoryResource::create_owned_pool(device);
        owned->set_release_threshold(UINT64_MAX);
        const Split raw = raw_pool_batch(owned->pool());
        const Split ours = measure(batches, n, [&] {
            for (int i = 0; i < n; ++i) {
                Buffer buffer = owned->allocate(1 << 20, stream);
                buffer.close(stream);
            }
        }, [&] { stream.sync(); });
        print("allocate + free 1 MiB, owned pool", raw, ours);
    }
    {
        const LaunchConfig config{.grid = 1, .block = 32};
        std::vector<std::pair<CUgraph, CUgraphExec>> raw_made;
        struct Captured {
            Graph graph;
            GraphExec exec;
        };
        std::vector<Captured> made;
        const Split raw = measure(batches, 1, [&] {
            CUgraph graph = nullptr;
            CUgraphExec exec = nullptr;
            api.cuStreamBeginCapture(raw_stream, CU_STREAM_CAPTURE_MODE_RELAXED);
            api.cuLaunchKernel(function, 1, 1, 1, 32, 1, 1, 0, raw_stream, nullptr, nullptr);
            api.cuStreamEndCapture(raw_stream, &graph);
            api.cuGraphInstantiateWithFlags(&exec, graph, 0);
            raw_made.emplace_back(graph, exec);
        }, [&] {
            for (auto [graph, exec] : raw_made) {
                api.cuGraphExecDestroy(exec);
                api.cuGraphDestroy(graph);
            }
            raw_made.clear();
        });
        const Split ours = measure(batches, 1, [&] {
            GraphBuilder builder(stream);
            builder.begin();
            launch(builder, config, empty);
            Graph graph = builder.end();
            GraphExec exec = graph.instantiate();
            made.push_back({std::move(graph), std::move(exec)});
        }, [&] { made.clear(); });
        print("capture + instantiate, 1 node", raw, ours);
    }
    // The raw side of a first get_kernel: the library loaded and its kernel found by hand.
    auto load_by_hand = [&](const std::string& bytes) {
        CUlibrary library = nullptr;
        CUkernel kernel = nullptr;
        api.cuLibraryLoadData(&library, bytes.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
        api.cuLibraryGetKernel(&kernel, library, "empty");
        return library;
    };
    auto unload_all = [&](std::vector<CUlibrary>& libraries) {
        for (CUlibrary library : libraries) api.cuLibraryUnload(library);
        libraries.clear();
    };
    {
        // The first get_kernel of a fresh ObjectCode (the lazy load), against the library loaded
        // and its kernel found by hand; each batch's library is unloaded outside the timing.
        const std::string bytes(code.code());
        std::vector<CUlibrary> libraries;
        const Split raw = measure(batches, 1, [&] {
            libraries.push_back(load_by_hand(bytes));
        }, [&] {
            unload_all(libraries);
        });
        std::optional<ObjectCode> fresh = ObjectCode::from_cubin(bytes, "fresh.cubin");
        std::vector<Kernel> kernels;
        const Split ours = measure(batches, 1, [&] { kernels.push_back(fresh->get_kernel("empty")); }, [&] {
            kernels.clear();
            fresh = ObjectCode::from_cubin(bytes, "fresh.cubin");
        });
        print("first get_kernel (load)", raw, ours);
    }
    {
        // The first get_kernel of code NVRTC made in this process (loaded without the walk), a
        // fresh compile before each batch; the raw side loads the same bytes.
        Program program(R"(extern "C" __global__ void empty() {})", SourceType::cxx,
                        {.name = "overhead_split_compiled.cu", .arch = device.arch()});
        constexpr int compiled_batches = 30;
        std::optional<ObjectCode> compiled = program.compile(CodeType::cubin);
        const std::string bytes(compiled->code());
        std::vector<CUlibrary> libraries;
        const Split raw = measure(compiled_batches, 1, [&] {
            libraries.push_back(load_by_hand(bytes));
        }, [&] {
            unload_all(libraries);
            compiled = program.compile(CodeType::cubin);  // the same caches disturbed on both sides
        });
        std::vector<Kernel> kernels;
        const Split ours = measure(compiled_batches, 1, [&] { kernels.push_back(compiled->get_kernel("empty")); }, [&] {
            kernels.clear();
            compiled = program.compile(CodeType::cubin);
        });
        print("first get_kernel (load) of code compiled in this process", raw, ours);
    }
    {
        // Every attribute PointerAttributes has, of an address inside a pool allocation.
        const Buffer buffer = device.allocate(1 << 20, stream);
        stream.sync();
        const CUdeviceptr address = buffer.handle() + 4096;
        constexpr int n = 64;
        unsigned long long words[bench::raw_pointer_attribute_count] = {};
        void* values[bench::raw_pointer_attribute_count];
        for (unsigned i = 0; i < bench::raw_pointer_attribute_count; ++i) values[i] = &words[i];
        const Split raw = measure(batches, n, [&] {
            for (int i = 0; i < n; ++i)
                api.cuPointerGetAttributes(bench::raw_pointer_attribute_count, bench::raw_pointer_attributes,
                                           values, address);
        });
        std::size_t sink = 0;
        const Split ours = measure(batches, n, [&] {
            for (int i = 0; i < n; ++i) sink += pointer_attributes(address).range_size;
        });
        if (sink == 0) std::abort();
        print("attributes of an address", raw, ours);
    }
    {
        const LaunchConfig config{.grid = 1, .block = 32};
        const Split raw = measure(batches, 1, [&] {
            api.cuLaunchKernel(function, 1, 1, 1, 32, 1, 1, 0, raw_stream, nullptr, nullptr);
            api.cuStreamSynchronize(raw_stream);
        });
        const Split ours = measure(batches, 1, [&] {
            launch(stream, config, empty);
            stream.sync();
        });
        print("1 empty-kernel launch + sync", raw, ours);
    }
    {
        std::string bytes(code.code());
        constexpr int n = 20;
        const Split raw = measure(batches, n, [&] {
            for (int i = 0; i < n; ++i) {
                std::string copy(bytes);
                if (copy.empty()) std::abort();
            }
        });
        const Split ours = measure(batches, n, [&] {
            for (int i = 0; i < n; ++i) {
                ObjectCode copy = ObjectCode::from_cubin(bytes, "copy.cubin");
                if (copy.size() == 0) std::abort();
            }
        });
        print("ObjectCode from bytes (" + std::to_string(bytes.size()) + " bytes)", raw, ours);
    }
    return 0;
}
