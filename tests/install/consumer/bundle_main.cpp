// A consumer's header bundle, made during its build by the cudacore CLI
// (cudacore_add_header_bundle), read back from the executable and handed to NVRTC: the kernel's
// #include is served from memory, not from a folder.
#include <cudacore/cudacore.hpp>
#include <cudacore/embedded_header_bundle.hpp>

#include <cstdio>

int main() {
    const cudacore::HeaderBundle bundle = cudacore::embedded_header_bundle("consumer_headers");
    const std::string* header = bundle.find("consumer/api.h");
    std::printf("bundle %s: %zu headers, consumer/api.h %s\n", bundle.name().c_str(), bundle.size(),
                header ? "present" : "absent");
    if (!header) return 1;

    cudacore::Program program(R"(
        #include <consumer/api.h>
        extern "C" __global__ void fill(int* out) { out[threadIdx.x] = CONSUMER_API + CONSUMER_DETAIL; }
        )", cudacore::SourceType::cxx, {.arch = "compute_75", .header_bundles = {bundle}});
    const cudacore::ObjectCode ptx = program.compile(cudacore::CodeType::ptx);
    const bool has_entry = ptx.code().find(".entry fill") != std::string_view::npos;
    std::printf("kernel fill from the bundle in PTX: %zu bytes%s\n", ptx.size(),
                has_entry ? "" : " (no .entry fill)");
    return has_entry ? 0 : 1;
}
