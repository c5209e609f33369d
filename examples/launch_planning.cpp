// Planning a launch before making it: PTX loaded with JIT options (its log read back), the
// kernels of the loaded library listed, a configuration checked against the kernel and the
// device (a block too large, refused with its reason), a grid sized from occupancy, and a stream
// that sleeps in sync() and keeps its input in the persisting part of L2. Checks every element.
// Mirrors what cuda-api-wrappers users write with module load options, kernel::occupancy and
// stream attributes.
#include <cudacore/cudacore.hpp>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

static const char* kSource = R"(
template <typename T> __global__ void scale(T* data, const T* in, T factor, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] = in[i] * factor;
}
)";

int main() try {
    using namespace cudacore;
    if (!system::driver_available() || system::device_count() == 0) {
        std::printf("skipped: no CUDA driver or GPU on this machine\n");
        return 0;
    }
    Device device(0);
    Stream stream = device.create_stream();
    ObjectCode ptx = Program(kSource, SourceType::cxx, {.arch = device.arch()})
                         .compile(CodeType::ptx, {"scale<float>", "scale<double>"});

    // The driver compiles the PTX at its first load: with these options, once.
    const LoadReport report = load_with_options(ptx, {.max_registers = 32, .verbose_log = true});
    std::printf("JIT log:\n%s", report.info_log.c_str());
    std::vector<Kernel> kernels = library_kernels(ptx);
    for (const Kernel& kernel : kernels)
        std::printf("kernel %s (%s), %d registers\n", kernel.name().c_str(),
                    kernel.lowered_name().c_str(), kernel.num_registers(device));
    if (kernels.size() != 2 || library_device(ptx) != device) return 1;
    Kernel scale = ptx.get_kernel("scale<float>");
    if (scale.num_registers(device) > 32) return 1;

    // A block larger than any kernel may have is refused before the launch, saying why.
    const std::optional<std::string> reason = launch_problem({.grid = 1, .block = 2048}, scale, device);
    std::printf("block of 2048: %s\n", reason ? reason->c_str() : "fits?");
    if (!reason || reason->find("over the kernel's limit") == std::string::npos) return 1;

    const unsigned n = 1 << 22;
    std::vector<float> host(n);
    for (unsigned i = 0; i < n; ++i) host[i] = float(i % 1000);
    Buffer in = device.allocate(n * sizeof(float), stream);
    Buffer out = device.allocate(n * sizeof(float), stream);
    in.copy_from(host, stream);

    // The stream's attributes: sleep while waiting, and keep the input in L2 where it can.
    set_synchronization_policy(stream, SynchronizationPolicy::blocking_sync);
    if (device.attribute(CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE) > 0) {
        CUaccessPolicyWindow window{};
        window.base_ptr = in.data();
        window.num_bytes = std::min<std::size_t>(
            in.size(), device.attribute(CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE));
        window.hitRatio = 1.0f;
        window.hitProp = CU_ACCESS_PROPERTY_PERSISTING;
        window.missProp = CU_ACCESS_PROPERTY_STREAMING;
        set_access_policy_window(stream, window);
    }

    // The block size that maximises occupancy, the grid that covers n.
    const LaunchConfig config = occupancy_config(scale, device, {.elements = n});
    check_launch(config, scale, device);
    std::printf("occupancy config: %s\n", to_string(config).c_str());
    launch(stream, config, scale, out, in, 3.0f, n);
    std::vector<float> result(n);
    out.copy_to(result, stream);
    stream.sync();
    clear_access_policy_window(stream);

    std::size_t wrong = 0;
    for (unsigned i = 0; i < n; ++i)
        if (result[i] != host[i] * 3.0f) ++wrong;
    std::printf("launch_planning: %u floats scaled, %zu wrong\n", n, wrong);
    return wrong == 0 && synchronization_policy(stream) == SynchronizationPolicy::blocking_sync ? 0 : 1;
} catch (const cudacore::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
}
