// The kernels of the PCH stress: small <cuda/std> kernels with the same leading directives (so
// one PCH serves them all), each variant a different kernel, and a digest of code bytes.
#pragma once

#include "cudacore/program_options.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace cudacore::test {

inline constexpr int kStressVariants = 6;

// The header every variant includes: CUDACORE_STRESS_HEADER, else <cuda/std/limits> (a fraction
// of a second to compile; <cuda/std/complex> takes seconds on a busy 2-core machine).
inline std::string stress_header() {
    const char* header = std::getenv("CUDACORE_STRESS_HEADER");
    return header && *header ? header : "cuda/std/limits";
}

inline std::string stress_kernel(int variant) {
    const std::string v = std::to_string(variant);
    return "#include <" + stress_header() + ">\n#include <cuda/std/cstdint>\n"
           "extern \"C\" __global__ void stress_" + v + "(cuda::std::int32_t* data) {\n"
           "    data[threadIdx.x] = data[threadIdx.x] * " + v + " + (int)sizeof(cuda::std::int64_t);\n"
           "}\n";
}

// All variants share the options but for the name (which NVRTC's flags do not hold).
inline ProgramOptions stress_options(int variant) {
    ProgramOptions options;
    options.name = "stress_" + std::to_string(variant) + ".cu";
    options.arch = "sm_90";
    return options;
}

inline std::uint64_t fnv1a(std::string_view bytes) {
    std::uint64_t hash = 1469598103934665603ull;
    for (const unsigned char c : bytes) {
        hash ^= c;
        hash *= 1099511628211ull;
    }
    return hash;
}

}  // namespace cudacore::test
