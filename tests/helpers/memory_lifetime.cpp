// Lifetime scenarios for buffers and memory resources: each must end with exit code 0 and
// nothing on stderr.
//   static - buffers of every kind in static objects, with work pending, destroyed after main
//   random - buffers, resources and streams destroyed in random orders, work still queued
//   reset  - buffers destroyed after someone else reset the primary context
//   exit   - std::exit() with live buffers on the stack and in statics
// Each also prints "freed while the driver was usable: N of M" at the very end of the process (an
// exit handler registered before the driver is loaded, so it runs after cudacore's and the
// driver's): buffers still alive at exit must be freed before the driver tears itself down.
#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/device_memory_resource.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/managed_memory_resource.hpp"
#include "cudacore/pinned_memory_pool_resource.hpp"
#include "cudacore/legacy_pinned_memory_resource.hpp"
#include "cudacore/synchronous_memory_resource.hpp"
#include "cudacore/virtual_memory_resource.hpp"
#include "loader/driver_api.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"

#include <atomic>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <variant>
#include <vector>

using namespace cudacore;

namespace {

using Object = std::variant<Buffer, Stream, std::shared_ptr<MemoryResource>>;
std::vector<Object> static_objects;

std::atomic<int> counted_allocations{0};
std::atomic<int> counted_frees{0};  // cuMemFree succeeded: the driver was still usable

// Device memory through cuMemAlloc / cuMemFree, counting the frees the driver accepted.
class CountingResource final : public MemoryResource {
public:
    explicit CountingResource(const Device& device)
        : context_(device.context()), ordinal_(device.ordinal()) {}
    bool is_device_accessible() const noexcept override { return true; }
    bool is_host_accessible() const noexcept override { return false; }
    int device_ordinal() const noexcept override { return ordinal_; }
    std::string description() const override { return "counting cuMemAlloc resource"; }

protected:
    CUdeviceptr do_allocate(std::size_t size, CUstream) override {
        detail::ContextScope scope(*detail::box_of(context_));
        CUdeviceptr pointer = 0;
        detail::check(detail::driver().cuMemAlloc(&pointer, size), "cuMemAlloc");
        ++counted_allocations;
        return pointer;
    }
    void do_deallocate(CUdeviceptr pointer, std::size_t, CUstream) override {
        const detail::DriverApi* api = detail::driver_if_loaded();
        if (!api) return;
        CUcontext current = nullptr;
        if (api->cuCtxGetCurrent(&current) != CUDA_SUCCESS) return;  // driver gone
        if (api->cuCtxPushCurrent(context_.handle()) != CUDA_SUCCESS) return;
        if (api->cuMemFree(pointer) == CUDA_SUCCESS) ++counted_frees;
        CUcontext popped = nullptr;
        api->cuCtxPopCurrent(&popped);
    }

private:
    Context context_;
    int ordinal_;
};

void report_frees() {
    std::printf("freed while the driver was usable: %d of %d\n", counted_frees.load(),
                counted_allocations.load());
    std::fflush(stdout);
}

// Buffers of every kind, each with a copy and a fill queued, plus the streams and resources.
std::vector<Object> make_objects(const Device& device, int rounds) {
    std::vector<Object> objects;
    std::vector<std::shared_ptr<MemoryResource>> resources = {
        device.memory_resource(), std::make_shared<DeviceMemoryResource>(device),
        std::make_shared<LegacyPinnedMemoryResource>(device),
        std::make_shared<ManagedMemoryResource>(device),
        std::make_shared<CountingResource>(device)};
    // The resources of the memory breadth work, where the device has what they need.
    resources.push_back(std::make_shared<SynchronousMemoryResource>(device));
    if (device.attribute(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED))
        resources.push_back(DeviceMemoryResource::create_owned_pool(device, {.max_size = 64 << 20}));
    if (device.attribute(CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED))
        resources.push_back(std::make_shared<PinnedMemoryPoolResource>(device));
    if (device.attribute(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED))
        resources.push_back(std::make_shared<VirtualMemoryResource>(device));
    for (int i = 0; i < rounds; ++i) {
        Stream stream = device.create_stream();
        for (auto& resource : resources) {
            Buffer a = resource->allocate(std::size_t{1} << 20, stream);
            Buffer b = resource->allocate(std::size_t{1} << 20, stream);
            a.fill_byte(static_cast<std::uint8_t>(i), stream);
            b.copy_from(a, stream);
            objects.emplace_back(std::move(a));
            objects.emplace_back(std::move(b));
        }
        objects.emplace_back(std::move(stream));
    }
    for (auto& resource : resources) objects.emplace_back(std::move(resource));
    return objects;
}

}  // namespace

int main(int argc, char** argv) {
    const char* scenario = argc > 1 ? argv[1] : "static";
    std::atexit(report_frees);  // before the driver is loaded: runs after its teardown
    try {
        Device device(0);
        if (std::strcmp(scenario, "static") == 0) {
            static Buffer function_static = device.allocate(4096, device.create_stream());
            for (auto& o : make_objects(device, 4)) static_objects.push_back(std::move(o));
        } else if (std::strcmp(scenario, "random") == 0) {
            std::mt19937 rng(2024);
            for (int round = 0; round < 10; ++round) {
                auto objects = make_objects(device, 3);
                std::shuffle(objects.begin(), objects.end(), rng);
                while (!objects.empty()) objects.erase(objects.begin());
            }
            device.sync();
        } else if (std::strcmp(scenario, "reset") == 0) {
            auto objects = make_objects(device, 3);
            device.sync();
            CUresult status = detail::driver().cuDevicePrimaryCtxReset(device.handle());
            std::printf("reset: %d\n", static_cast<int>(status));
            std::shuffle(objects.begin(), objects.end(), std::mt19937(7));
            objects.clear();
            // The library keeps working afterwards with fresh objects.
            Stream stream = device.create_stream();
            Buffer buffer = device.allocate(4096, stream);
            buffer.fill_byte(1, stream);
            stream.sync();
        } else if (std::strcmp(scenario, "exit") == 0) {
            for (auto& o : make_objects(device, 2)) static_objects.push_back(std::move(o));
            auto objects = make_objects(device, 2);
            std::printf("scenario %s done\n", scenario);
            std::fflush(stdout);
            std::exit(0);
        } else {
            std::fprintf(stderr, "unknown scenario %s\n", scenario);
            return 2;
        }
    } catch (const Error& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    std::printf("scenario %s done\n", scenario);
    return 0;
}
