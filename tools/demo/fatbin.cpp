// `cudacore demo`: The fatbin step: saxpy for sm_80, sm_90 and compute_90 in one call (nvFatbin).
#include "demo.hpp"

#include "cudacore/cache_artefact.hpp"
#include "cudacore/code_inspection.hpp"
#include "cudacore/fatbin_compile.hpp"
#include "cudacore/program.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace cudacore::cli::demo {

void step_fatbin(Demo& demo) {
    std::printf("== fatbin (saxpy for sm_80, sm_90 and compute_90 PTX in one call, one artefact "
                "for a fleet)\n");
    std::optional<ObjectCode> built;
    const auto start = std::chrono::steady_clock::now();
    try {
        const Program program(kSaxpySource, SourceType::cxx, {.name = "saxpy_fleet"});
        built = compile_fatbin(program, {"sm_80", "sm_90", "compute_90"});
    } catch (const LoaderError& e) {  // nvFatbin is optional, like a toolkit on a GPU machine
        std::printf("SKIPPED: %s\n", e.what());
        demo.outcomes.skipped("fatbin", "nvFatbin not found");
        return;
    }
    const ObjectCode& fatbin = *built;
    const std::vector<FatbinEntry> images = inspect_code(fatbin).entries;
    std::printf("one fatbin of %zu bytes in %.1f ms (nvFatbin), holding:\n", fatbin.size(),
                milliseconds_since(start));
    std::vector<std::string> held;
    for (const FatbinEntry& image : images) {
        std::printf("  %-4s %-10s %6zu bytes%s\n", image.kind.c_str(), image.arch.c_str(), image.size,
                    image.compressed ? " (compressed)" : "");
        held.push_back(image.kind + ":" + image.arch);
    }
    std::sort(held.begin(), held.end());
    const bool ok = held == std::vector<std::string>{"elf:sm_80", "elf:sm_90", "ptx:compute_90"};
    std::printf("a cubin per arch and PTX for newer GPUs: %s\n", demo.outcomes.verify("fatbin", ok));

    std::printf("-- launch saxpy from the fatbin (the driver picks the device's image)\n");
    if (!gpu_for(demo, "fatbin launch", "launching needs a GPU")) return;
    const Kernel kernel = fatbin.get_kernel("saxpy");
    std::printf("%s runs the image of binary version %d\n", demo.arch.c_str(),
                kernel.binary_version(*demo.device));
    demo.outcomes.verify("fatbin launch", launch_and_compare(*demo.device, kernel, saxpy_on_cpu));
}

}  // namespace cudacore::cli::demo
