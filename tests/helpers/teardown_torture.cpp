// Teardown torture: from a seed, makes a random mix of the library's objects (owned and adopted
// streams, a foreign framework's stream and pool, buffers from several resources, DLPack round
// trips, ObjectCode and kernels launched on several streams, events, graphs and their
// executables, a green context where the device has them, pinned and managed memory), puts work
// in flight, then lets everything go in a random order: some objects on other threads, some left
// in static storage to die after main returns, and the process ends by returning from main or by
// calling exit() while releases may be pending. Every choice comes from the seed and is printed,
// so a failing seed is rerun as it was.
//
//   helper_teardown_torture SEED [--cpu] [--quiet] [--none-after-main]
// CUDACORE_TORTURE_CACHE=FOLDER: compile its kernels through a disk cache there (many seeds).
//
// --none-after-main: what the seed leaves for after main is dropped at the end of main instead
// (the same random draws otherwise), to tell a failure of static destruction from the rest.
// --cpu (or no GPU): the code layer's objects (Program, ObjectCode, Linker, serialized forms,
// memory and disk caches) and the paths that need no driver, in the same random orders.
// Exit code 0 on success; any failure prints "FAILED: ..." and exits 1. A crash or a hang is
// what the caller (scripts/gpu-check.sh torture, the CPU test) looks for.
#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/device_memory_resource.hpp"
#include "cudacore/disk_program_cache.hpp"
#include "cudacore/dlpack.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/event.hpp"
#include "cudacore/graph.hpp"
#include "cudacore/graph_builder.hpp"
#include "cudacore/graph_exec.hpp"
#include "cudacore/green_context.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/linker.hpp"
#include "cudacore/managed_memory_resource.hpp"
#include "cudacore/memory_program_cache.hpp"
#include "cudacore/cached_compile.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/legacy_pinned_memory_resource.hpp"
#include "cudacore/program.hpp"
#include "cudacore/stream.hpp"
#include "cudacore/system.hpp"
#include "crash_backtrace.hpp"
#include "loader/driver_api.hpp"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

using namespace cudacore;

namespace {

bool quiet = false;
bool none_after_main = false;

void say(const char* format, ...) {
    if (quiet) return;
    va_list args;
    va_start(args, format);
    std::vprintf(format, args);
    va_end(args);
    std::fputc('\n', stdout);
}

[[noreturn]] void fail(const std::string& what) {
    std::printf("FAILED: %s\n", what.c_str());
    std::fflush(stdout);
    std::_Exit(1);
}

// One object of the mix. `holds` is what its release drops (the object itself, type-erased).
// `owner`: the item that keeps valid the stream handle this one uses (a foreign framework, or
// the cudacore stream an adopted one wraps), -1 for none. As a caller of Stream::from_handle
// must, the torture drops an owner only after the wrappers of its stream and the buffers freed on
// it, and never leaves those for after main or for another thread. A library or an executable
// graph launched there is no user: its release must not need the handle.
// `green`: tied to a green context, which the driver allows to be used from one thread at a
// time only ("no internal synchronization"): such items are dropped on the main thread.
struct Item {
    std::string name;
    std::shared_ptr<void> holds;
    int owner = -1;
    bool is_owner = false;
    bool green = false;
};

template <class T>
std::shared_ptr<void> hold(T value) {
    return std::make_shared<T>(std::move(value));
}

// Left here, they die after main returns (and after the library's atexit handlers).
std::vector<std::shared_ptr<void>> static_items;

constexpr const char* kKernels = R"(
extern "C" __global__ void spin(unsigned* out, unsigned long long cycles) {
    long long start = clock64();
    while (clock64() - start < (long long)cycles) {}
    if (threadIdx.x == 0) out[blockIdx.x] = 1u;
}
extern "C" __global__ void fill(unsigned* out, unsigned value, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = value;
}
)";

// A framework that is not cudacore: its own stream (made with the driver call) and memory pool,
// destroyed when it goes. cudacore only adopts the stream.
struct ForeignFramework {
    CUdevice device = 0;
    CUstream stream = nullptr;
    std::shared_ptr<DeviceMemoryResource> pool;
    explicit ForeignFramework(const Device& cudacore_device) {
        // Like a framework on the runtime API: it retains the primary context itself.
        const auto& api = detail::driver();
        CUcontext context = nullptr;
        device = cudacore_device.handle();
        if (api.cuDevicePrimaryCtxRetain(&context, device) != CUDA_SUCCESS)
            fail("cuDevicePrimaryCtxRetain for the foreign framework");
        api.cuCtxPushCurrent(context);
        const CUresult status = api.cuStreamCreateWithPriority(&stream, CU_STREAM_NON_BLOCKING, 0);
        api.cuCtxPopCurrent(&context);
        if (status != CUDA_SUCCESS) fail("cuStreamCreateWithPriority for the foreign framework");
        pool = DeviceMemoryResource::create_owned_pool(cudacore_device);
    }
    ~ForeignFramework() {
        pool.reset();
        const auto& api = detail::driver();
        api.cuStreamDestroy(stream);
        api.cuDevicePrimaryCtxRelease(device);
    }
};

class GpuMix {
public:
    GpuMix(std::mt19937_64& random, std::vector<Item>& items) : random_(random), items_(items) {}

    void build(const std::string& cubin) {
        Device device(0);
        cubin_ = cubin;
        const int count = pick(8, 40);
        for (int i = 0; i < count; ++i) add_one(device);
    }

private:
    int pick(int low, int high) { return std::uniform_int_distribution<int>(low, high)(random_); }
    bool chance(int percent) { return pick(1, 100) <= percent; }

    // A stream usable now: one of ours, an adopted one, or a green context's.
    struct StreamRef {
        Stream stream;
        int owner;  // the item keeping its handle valid, -1 for a stream cudacore owns
        std::string name;
        bool green = false;
    };

    StreamRef any_stream(const Device& device) {
        if (streams_.empty() || chance(15)) return new_stream(device);
        return streams_[pick(0, int(streams_.size()) - 1)];
    }

    StreamRef new_stream(const Device& device) {
        const int kind = pick(0, 9);
        if (kind <= 4) {
            StreamRef ref{device.create_stream(), -1, "stream#" + std::to_string(streams_.size())};
            return remember(ref);
        }
        if (kind <= 6) {
            // Adopting a stream that cudacore made and owns: its item is the owner.
            Stream owner = device.create_stream();
            items_.push_back({"owner-stream#" + std::to_string(streams_.size()), hold(owner), -1, true});
            say("make %s", items_.back().name.c_str());
            StreamRef ref{Stream::from_handle(owner.handle()), int(items_.size()) - 1,
                          "adopted-own#" + std::to_string(streams_.size())};
            return remember(ref);
        }
        if (kind <= 8) {
            const int framework = framework_index(device);
            auto* foreign = static_cast<ForeignFramework*>(items_[framework].holds.get());
            StreamRef ref{Stream::from_handle(foreign->stream), framework,
                          "adopted-foreign#" + std::to_string(streams_.size())};
            return remember(ref);
        }
        if (green_supported(device)) {
            try {
                GreenContext green = GreenContext::create(sm_resource(device));
                StreamRef ref{green.create_stream(), -1, "green-stream#" + std::to_string(streams_.size()), true};
                add("green-context", hold(std::move(green)), -1, true);
                return remember(ref);
            } catch (const Error& e) {
                say("  green context refused: %s", e.what());
            }
        }
        StreamRef ref{device.create_stream(), -1, "stream#" + std::to_string(streams_.size())};
        return remember(ref);
    }

    StreamRef remember(StreamRef ref) {
        streams_.push_back(ref);
        add(ref.name, hold(ref.stream), ref.owner, ref.green);
        return ref;
    }

    bool green_supported(const Device& device) {
        if (green_checked_) return green_ok_;
        green_checked_ = true;
        try {
            green_ok_ = sm_resource(device).sm_count() > 0;
        } catch (const Error&) {
            green_ok_ = false;
        }
        return green_ok_;
    }

    int framework_index(const Device& device) {
        if (framework_ < 0 || chance(20)) {
            items_.push_back({"foreign-framework#" + std::to_string(items_.size()),
                              std::make_shared<ForeignFramework>(device), -1, true});
            framework_ = int(items_.size()) - 1;
            say("make %s", items_.back().name.c_str());
        }
        return framework_;
    }

    void add(const std::string& name, std::shared_ptr<void> object, int owner = -1,
             bool green = false) {
        items_.push_back({name, std::move(object), owner, false, green});
        say("make %s%s", name.c_str(), owner >= 0 ? (" (uses " + items_[owner].name + ")").c_str() : "");
    }

    std::shared_ptr<MemoryResource> any_resource(const Device& device) {
        switch (pick(0, 5)) {
        case 0:
            return device.memory_resource();
        case 1: {
            if (!owned_pool_ || chance(30)) {
                owned_pool_ = DeviceMemoryResource::create_owned_pool(device);
                add("owned-pool", owned_pool_);
            }
            return owned_pool_;
        }
        case 2: {
            // The framework's pool (its buffers hold it; the framework's stream is not involved).
            const int framework = framework_index(device);
            return static_cast<ForeignFramework*>(items_[framework].holds.get())->pool;
        }
        case 3: {
            auto pinned = std::make_shared<LegacyPinnedMemoryResource>(device);
            add("pinned-resource", pinned);
            return pinned;
        }
        case 4: {
            auto managed = std::make_shared<ManagedMemoryResource>(device);
            add("managed-resource", managed);
            return managed;
        }
        default:
            return device.memory_resource();
        }
    }

    ObjectCode any_code() {
        if (!codes_.empty() && chance(60)) return codes_[pick(0, int(codes_.size()) - 1)];
        ObjectCode code = ObjectCode::from_cubin(cubin_, "torture");
        codes_.push_back(code);
        add("object-code#" + std::to_string(codes_.size()), hold(code));
        return code;
    }

    void add_one(const Device& device) {
        switch (pick(0, 9)) {
        case 0:
            new_stream(device);
            return;
        case 1:
        case 2:
            launch_spin(device);
            return;
        case 3: {
            StreamRef s = any_stream(device);
            add("event on " + s.name, hold(s.stream.record(EventOptions{.timing_enabled = chance(50)})), -1, s.green);
            return;
        }
        case 4:
            buffer_from_resource(device);
            return;
        case 5:
            dlpack_round_trip(device);
            return;
        case 6:
            graph(device);
            return;
        case 7: {
            ObjectCode code = any_code();
            add("kernel", hold(code.get_kernel(chance(50) ? "spin" : "fill")));
            return;
        }
        case 8: {
            // A copy of a stream wrapper kept as an object of its own.
            StreamRef s = any_stream(device);
            add("copy of " + s.name, hold(Stream(s.stream)), s.owner, s.green);
            return;
        }
        default:
            launch_fill(device);
            return;
        }
    }

    // Work in flight: a kernel that runs for a while, writing into a buffer freed on its stream.
    void launch_spin(const Device& device) {
        StreamRef s = any_stream(device);
        Buffer out = device.allocate(256 * sizeof(unsigned), s.stream);
        ObjectCode code = any_code();
        const unsigned long long cycles = 1000ull * pick(1, 2000);
        launch(s.stream, LaunchConfig{.grid = 4, .block = 32}, code.get_kernel("spin"),
               static_cast<unsigned*>(out.data()), cycles);
        if (chance(50)) add("spin output on " + s.name, hold(std::move(out)), s.owner, s.green);
    }

    void launch_fill(const Device& device) {
        StreamRef s = any_stream(device);
        Buffer out = device.allocate(1024 * sizeof(unsigned), s.stream);
        launch(s.stream, LaunchConfig{.grid = 4, .block = 256}, any_code().get_kernel("fill"),
               static_cast<unsigned*>(out.data()), 7u, 1024u);
        if (chance(30)) {
            std::vector<unsigned> host(1024);
            out.copy_to(host, s.stream);
            s.stream.sync();
            if (std::count(host.begin(), host.end(), 7u) != 1024) fail("fill wrote wrong values");
        }
        add("fill output on " + s.name, hold(std::move(out)), s.owner, s.green);
    }

    void buffer_from_resource(const Device& device) {
        StreamRef s = any_stream(device);
        std::shared_ptr<MemoryResource> resource = any_resource(device);
        Buffer buffer = resource->allocate(std::size_t(pick(1, 64)) << 10, s.stream);
        if (chance(50)) buffer.fill_byte(std::uint8_t(pick(0, 255)), s.stream);
        add("buffer of " + resource->description() + " on " + s.name, hold(std::move(buffer)), s.owner,
            s.green);
    }

    void dlpack_round_trip(const Device& device) {
        StreamRef s = any_stream(device);
        Buffer buffer = device.allocate(4096, s.stream);
        DLPackLayout layout;
        layout.shape = {1024};
        DLManagedTensor* tensor = to_dlpack(buffer, layout);
        if (chance(50)) {
            add("dlpack import on " + s.name, hold(from_dlpack(tensor)), s.owner, s.green);
        } else {
            // A tensor another library holds, its deleter called when it goes.
            std::shared_ptr<DLManagedTensor> held(tensor, [](DLManagedTensor* t) { t->deleter(t); });
            add("dlpack tensor on " + s.name, held, s.owner, s.green);
        }
    }

    void graph(const Device& device) {
        // Captured on one of our own streams; launched on any stream.
        Stream capture = device.create_stream();
        Buffer out = device.allocate(1024 * sizeof(unsigned), capture);
        capture.sync();
        GraphBuilder builder = capture.begin_capture();
        launch(builder, LaunchConfig{.grid = 4, .block = 256}, any_code().get_kernel("fill"),
               static_cast<unsigned*>(out.data()), 3u, 1024u);
        builder.hold(out);
        Graph graph = builder.end();
        GraphExec exec = graph.instantiate();
        StreamRef s = any_stream(device);
        exec.launch(s.stream);
        if (chance(50)) add("graph", hold(std::move(graph)));
        add("graph-exec launched on " + s.name, hold(std::move(exec)));
    }

    std::mt19937_64& random_;
    std::vector<Item>& items_;
    std::string cubin_;
    std::vector<StreamRef> streams_;
    std::vector<ObjectCode> codes_;
    std::shared_ptr<DeviceMemoryResource> owned_pool_;
    int framework_ = -1;
    bool green_checked_ = false;
    bool green_ok_ = false;
};

// The code layer's objects: no driver needed.
void build_cpu_mix(std::mt19937_64& random, std::vector<Item>& items, const ObjectCode& ptx,
                   const std::filesystem::path& cache_folder) {
    auto pick = [&](int low, int high) { return std::uniform_int_distribution<int>(low, high)(random); };
    const int count = pick(6, 30);
    auto memory_cache = std::make_shared<MemoryProgramCache>();
    items.push_back({"memory-cache", memory_cache, -1, false});
    for (int i = 0; i < count; ++i) {
        std::string name;
        std::shared_ptr<void> object;
        switch (pick(0, 6)) {
        case 0:
            name = "object-code copy";
            object = hold(ObjectCode(ptx));
            break;
        case 1: {
            name = "object-code from bytes";
            object = hold(ObjectCode::from_ptx(std::string(ptx.code()), "torture-ptx"));
            break;
        }
        case 2: {
            name = "serialized and read back";
            object = hold(ObjectCode::deserialize(ptx.serialize()));
            break;
        }
        case 3: {
            name = "program";
            object = hold(Program(kKernels, SourceType::cxx));
            break;
        }
        case 4: {
            name = "memory cache entry";
            memory_cache->put(CacheKey::of_bytes("key-" + std::to_string(pick(0, 5))), ptx);
            object = memory_cache;
            break;
        }
        case 5: {
            name = "disk cache";
            auto disk = std::make_shared<DiskProgramCache>(cache_folder);
            disk->put(CacheKey::of_bytes("key-" + std::to_string(pick(0, 5))), ptx);
            object = disk;
            break;
        }
        default: {
            name = "no-driver call";
            try {
                Device device(0);
                object = hold(device);
            } catch (const Error&) {
                object = std::make_shared<int>(0);  // expected without a driver
            }
            break;
        }
        }
        say("make %s", name.c_str());
        items.push_back({name, std::move(object), -1, false});
    }
}

// Lets the items go in a random order: each on this thread, on another thread, or left in static
// storage; an owner only once nothing that uses its stream is left.
void release_all(std::mt19937_64& random, std::vector<Item>& items) {
    auto pick = [&](int low, int high) { return std::uniform_int_distribution<int>(low, high)(random); };
    std::vector<int> order(items.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = int(i);
    std::shuffle(order.begin(), order.end(), random);
    std::vector<std::thread> threads;
    std::vector<bool> gone(items.size(), false);
    auto users_left = [&](int owner) {
        for (std::size_t i = 0; i < items.size(); ++i)
            if (!gone[i] && items[i].owner == owner) return true;
        return false;
    };
    while (!order.empty()) {
        // The first in order that may go now (an owner waits for its users).
        auto next = std::find_if(order.begin(), order.end(), [&](int index) {
            return !(items[index].is_owner && users_left(index));
        });
        const int index = *next;
        order.erase(next);
        gone[index] = true;
        Item& item = items[index];
        // Owners, users of an owner's stream and green-context items go here and now (see Item).
        const bool here = item.is_owner || item.owner >= 0 || item.green;
        const int how = here ? 0 : pick(0, 9);
        if (how <= 6) {
            say("drop %s", item.name.c_str());
            item.holds.reset();
        } else if (how <= 8) {
            say("drop %s on another thread", item.name.c_str());
            threads.emplace_back([object = std::move(item.holds)]() mutable { object.reset(); });
        } else {
            say("leave %s for after main", item.name.c_str());
            static_items.push_back(std::move(item.holds));
        }
        if (!threads.empty() && pick(0, 3) == 0) {
            threads.front().join();
            threads.erase(threads.begin());
        }
    }
    for (auto& thread : threads) thread.join();
}

}  // namespace

int main(int argc, char** argv) {
    cudacore::test::install_crash_backtrace();
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s SEED [--cpu] [--quiet] [--none-after-main]\n", argv[0]);
        return 2;
    }
    const std::uint64_t seed = std::strtoull(argv[1], nullptr, 10);
    bool cpu = false;
    for (int i = 2; i < argc; ++i) {
        if (std::strcmp(argv[i], "--cpu") == 0) cpu = true;
        if (std::strcmp(argv[i], "--quiet") == 0) quiet = true;
        if (std::strcmp(argv[i], "--none-after-main") == 0) none_after_main = true;
    }
    std::mt19937_64 random(seed);
    const bool gpu = !cpu && system::driver_available() && system::device_count() > 0;
    say("seed %llu, %s", static_cast<unsigned long long>(seed), gpu ? "gpu" : "cpu");

    std::vector<Item> items;
    try {
        if (gpu) {
            ProgramOptions options;
            options.name = "torture";
            options.arch = Device(0).arch();
            Program program(kKernels, SourceType::cxx, options);
            // Thousands of seeds share one compile through the disk cache when it is named.
            const char* cache_folder = std::getenv("CUDACORE_TORTURE_CACHE");
            std::optional<DiskProgramCache> cache;
            if (cache_folder) cache.emplace(cache_folder);
            const ObjectCode code = cache ? compile_cached(program, CodeType::cubin, {}, {.cache = &*cache})
                                          : program.compile(CodeType::cubin);
            GpuMix(random, items).build(std::string(code.code()));
        } else {
            ProgramOptions options;
            options.name = "torture";
            options.arch = "sm_90";
            const ObjectCode ptx = Program(kKernels, SourceType::cxx, options).compile(CodeType::ptx);
            const auto folder = std::filesystem::temp_directory_path() /
                                ("cudacore-torture-" + std::to_string(seed) + "-" +
                                 std::to_string(::getpid()));
            build_cpu_mix(random, items, ptx, folder);
            static_items.push_back(std::shared_ptr<void>(nullptr, [folder](void*) {
                std::error_code ignored;
                std::filesystem::remove_all(folder, ignored);
            }));
        }
    } catch (const Error& e) {
        fail(std::string("while making objects: ") + e.what());
    }

    try {
        release_all(random, items);
    } catch (const std::exception& e) {
        fail(std::string("while releasing: ") + e.what());
    }
    if (none_after_main) {
        say("dropping %zu objects left for after main now", static_items.size());
        static_items.clear();
    }
    const int ending = std::uniform_int_distribution<int>(0, 2)(random);
    std::printf("%s: %zu objects, %zu left for after main\n",
                ending == 0 ? "exit()" : "return from main", items.size(), static_items.size());
    std::fflush(stdout);
    if (ending == 0) std::exit(0);
    return 0;
}
