// `cudacore demo`: The compile step: saxpy and a templated reduction compiled by NVRTC to cubins for the demo's
// arch (no GPU needed).
#include "demo.hpp"

#include "cudacore/program.hpp"

#include <chrono>
#include <cstdio>

namespace cudacore::cli::demo {

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

}  // namespace cudacore::cli::demo
