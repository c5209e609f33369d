// The owning-object contract (tests/support/owning_contract.hpp) over every owning type that is an
// OwningHandle, and loaded ObjectCode, each made on device 0: close() ends it for every copy, reset() drops one share,
// a closed or empty object's calls say which, copies compare and hash equal. Skipped, with the
// reason, without a GPU.
#include "owning_contract.hpp"

#include "cudacore/cudacore.hpp"
#include "loader/driver_api.hpp"

#include <stdexcept>
#include <string>

namespace {

using namespace cudacore;

bool gpu_available(std::string& why) {
    why = test::gpu_unavailable_reason();
    if (why.empty()) return true;
    why = "no GPU: " + why;
    return false;
}

struct ContextTraits {
    using Object = Context;
    static bool available(std::string& why) { return gpu_available(why); }
    static Context make() { return Context::create(Device(0)); }
    static void use(const Context& context) { context.sync(); }
};

struct StreamTraits {
    using Object = Stream;
    static bool available(std::string& why) { return gpu_available(why); }
    static Stream make() { return Device(0).create_stream(); }
    static void use(const Stream& stream) { stream.sync(); }
};

struct EventTraits {
    using Object = Event;
    static bool available(std::string& why) { return gpu_available(why); }
    static Event make() { return Device(0).create_event(); }
    static void use(const Event& event) { event.sync(); }
};

struct GraphTraits {
    using Object = Graph;
    static bool available(std::string& why) { return gpu_available(why); }
    static Graph make() { return Graph::create(Device(0)); }
    static void use(const Graph& graph) { (void)graph.node_count(); }
};

struct GraphExecTraits {
    using Object = GraphExec;
    static bool available(std::string& why) { return gpu_available(why); }
    static GraphExec make() {
        Graph graph = Graph::create(Device(0));
        graph.add_empty({});
        return graph.instantiate();
    }
    static void use(const GraphExec& exec) { (void)exec.device(); }
};

CudaArray small_array() {
    return CudaArray::create(Device(0), {.width = 64, .height = 64, .surface_load_store = true});
}

struct CudaArrayTraits {
    using Object = CudaArray;
    static bool available(std::string& why) { return gpu_available(why); }
    static CudaArray make() { return small_array(); }
    static void use(const CudaArray& array) { (void)TextureObject::from_array(array); }
};

struct MipmappedArrayTraits {
    using Object = MipmappedArray;
    static bool available(std::string& why) { return gpu_available(why); }
    static MipmappedArray make() {
        return MipmappedArray::create(Device(0), {.width = 64, .height = 64}, 2);
    }
    static void use(const MipmappedArray& array) { (void)array.level(1); }
};

struct TextureObjectTraits {
    using Object = TextureObject;
    static bool available(std::string& why) { return gpu_available(why); }
    static TextureObject make() { return TextureObject::from_array(small_array()); }
    // What launch() does with a texture argument before the driver.
    static void use(const TextureObject& texture) {
        (void)KernelArgument<TextureObject>::convert(texture);
    }
};

struct SurfaceObjectTraits {
    using Object = SurfaceObject;
    static bool available(std::string& why) { return gpu_available(why); }
    static SurfaceObject make() { return SurfaceObject::from_array(small_array()); }
    static void use(const SurfaceObject& surface) {
        (void)KernelArgument<SurfaceObject>::convert(surface);
    }
};

struct MemoryPoolTraits {
    using Object = MemoryPool;
    static bool available(std::string& why) { return gpu_available(why); }
    static MemoryPool make() { return DeviceMemoryResource::create_owned_pool(Device(0))->memory_pool(); }
    static void use(const MemoryPool& pool) { (void)pool.used_mem_current(); }
};

// A pool made with the raw driver and taken over (DeviceMemoryResource::from_handle): close()
// lets go of the resource, which destroys it.
struct TakenMemoryPoolTraits {
    using Object = MemoryPool;
    static bool available(std::string& why) {
        if (!gpu_available(why)) return false;
        if (Device(0).attribute(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED) != 0) return true;
        why = "device 0 has no memory pools";
        return false;
    }
    static MemoryPool make() {
        CUmemPoolProps props{};
        props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
        props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        props.location.id = 0;
        CUmemoryPool raw = nullptr;
        if (detail::driver().cuMemPoolCreate(&raw, &props) != CUDA_SUCCESS) throw std::runtime_error("cuMemPoolCreate failed");
        return DeviceMemoryResource::from_handle(raw, Device(0), {.take_ownership = true})->memory_pool();
    }
    static void use(const MemoryPool& pool) { (void)pool.used_mem_current(); }
};

// Loaded code: close() ends the value (and the library, nothing else holding it) for every copy.
struct ObjectCodeTraits {
    using Object = ObjectCode;
    static bool available(std::string& why) { return gpu_available(why); }
    static ObjectCode make() {
        static int next = 0;
        ProgramOptions options;
        options.name = "contract" + std::to_string(next++);  // each a value of its own
        options.arch = Device(0).arch();
        Device(0).set_current();
        ObjectCode code = Program(R"(extern "C" __global__ void touch(int* p) { *p = 1; })",
                                  SourceType::cxx, options)
                              .compile(CodeType::cubin);
        code.load();
        return code;
    }
    static void use(const ObjectCode& code) { (void)code.get_kernel("touch"); }
};

}  // namespace

// Every OwningHandle type (a typedef: the macro would split the list at its commas).
using OwningTypes =
    ::testing::Types<StreamTraits, EventTraits, ContextTraits, GraphTraits, GraphExecTraits,
                     CudaArrayTraits, MipmappedArrayTraits, TextureObjectTraits,
                     SurfaceObjectTraits, MemoryPoolTraits, TakenMemoryPoolTraits,
                     ObjectCodeTraits>;

namespace cudacore::test {
INSTANTIATE_TYPED_TEST_SUITE_P(Gpu, OwningContract, OwningTypes);
INSTANTIATE_TYPED_TEST_SUITE_P(Gpu, OwningEquality, OwningTypes);
}  // namespace cudacore::test
