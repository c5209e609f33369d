// A consumer of cudacore: its version, whether a driver is present, and a kernel compiled to PTX
// through NVRTC (opened at run time; no GPU needed).
#include <cudacore/cudacore.hpp>

#include <cstdio>

int main() {
    cudacore::Program program(R"(
        extern "C" __global__ void scale(float* x, float a, unsigned n) {
            unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) x[i] *= a;
        })", cudacore::SourceType::cxx, {.arch = "compute_75"});
    const cudacore::ObjectCode ptx = program.compile(cudacore::CodeType::ptx);
    const bool has_entry = ptx.code().find(".entry scale") != std::string_view::npos;
    std::printf("cudacore %s, driver %s, kernel scale in PTX: %zu bytes%s\n", cudacore::version(),
                cudacore::system::driver_available() ? "present" : "absent", ptx.size(),
                has_entry ? "" : " (no .entry scale)");
    return has_entry ? 0 : 1;
}
