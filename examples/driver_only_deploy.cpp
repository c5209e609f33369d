// Deploying to a machine with only the driver: the kernel's headers (<cuda/std/cmath>,
// cuda_fp16.h, cooperative_groups.h) come from a header bundle built into this executable, so the
// compile reads no toolkit folder and needs no include path. cudacore's own (no cuda.core example).
#include <cudacore/cudacore.hpp>

#include <cstdio>
#include <string>
#include <vector>

// out[i] = hypot(a[i], b[i]) rounded to half precision; each warp's sum of those in warp_sums.
static const char* kSource = R"(
#include <cooperative_groups.h>
#include <cuda/std/cmath>
#include <cuda_fp16.h>
namespace cg = cooperative_groups;

extern "C" __global__ void hypot_half(const float* a, const float* b, float* out,
                                      float* warp_sums, unsigned n) {
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    float value = 0.0f;
    if (i < n) {
        value = __half2float(__float2half(cuda::std::hypot(a[i], b[i])));
        out[i] = value;
    }
    for (unsigned offset = 16; offset > 0; offset /= 2) value += warp.shfl_down(value, offset);
    if (warp.thread_rank() == 0 && i < n) warp_sums[i / 32] = value;
}
)";

int main() try {
    using namespace cudacore;
    // Made during the build by cudacore_add_header_bundle (examples/CMakeLists.txt).
    const HeaderBundle headers = embedded_header_bundle("deploy_headers");
    const bool have_gpu = system::driver_available() && system::device_count() > 0;
    const std::string arch = have_gpu ? Device(0).arch() : "sm_90";
    // With header bundles the toolkit's folders are not searched: every #include above is
    // served from memory, so the toolkit's include folder may be absent.
    const ProgramOptions options{
        .name = "hypot_half.cu", .arch = arch, .header_bundles = {headers}};
    const ObjectCode code = Program(kSource, SourceType::cxx, options).compile(CodeType::cubin);
    if (!have_gpu) {  // compiling needs no GPU; launching does
        std::printf("skipped: no CUDA driver or GPU on this machine (the kernel compiled from the "
                    "built-in bundle anyway: %zu bytes of %s cubin)\n",
                    code.size(), arch.c_str());
        return 0;
    }
    const system::LibraryVersion nvrtc = system::nvrtc_version();
    std::printf("NVRTC %d.%d from %s\n", nvrtc.major, nvrtc.minor, system::nvrtc_path().c_str());
    std::printf("headers from the built-in bundle %s\n", headers.describe().c_str());

    const Device device(0);
    Stream stream = device.create_stream();
    const unsigned n = 256, block = 128;
    std::vector<float> a(n), b(n), out(n), warp_sums(n / 32);
    for (unsigned i = 0; i < n; ++i) {
        a[i] = 3.0f * float(i);
        b[i] = 4.0f * float(i);
    }
    Buffer da = device.allocate(n * sizeof(float), stream);
    Buffer db = device.allocate(n * sizeof(float), stream);
    Buffer dout = device.allocate(n * sizeof(float), stream);
    Buffer dsums = device.allocate(n / 32 * sizeof(float), stream);
    da.copy_from(a, stream);
    db.copy_from(b, stream);
    launch(stream, LaunchConfig{.grid = n / block, .block = block}, code.get_kernel("hypot_half"),
           da, db, dout, dsums, n);
    dout.copy_to(out, stream);
    dsums.copy_to(warp_sums, stream);
    stream.sync();

    // hypot(3i, 4i) = 5i, which half precision holds exactly for i < 256 (5i <= 1275 < 2048).
    std::size_t wrong = 0;
    for (unsigned i = 0; i < n; ++i) wrong += out[i] != 5.0f * float(i);
    for (unsigned w = 0; w < n / 32; ++w) {
        const unsigned first = 32 * w;
        wrong += warp_sums[w] != 5.0f * float(32 * first + 31 * 32 / 2);
    }
    std::printf("%u values and %u warp sums from a kernel compiled with bundled headers only: "
                "%zu wrong\n",
                n, n / 32, wrong);
    return wrong == 0 ? 0 : 1;
} catch (const cudacore::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
}
