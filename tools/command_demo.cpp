// `cudacore demo`: the main job, end to end, saying clearly what it skipped.
//
// Steps, each a function of its own file in tools/demo/ (devices here): devices -> compile
// (NVRTC) -> link (two LTO-IR units, nvJitLink) -> cache (compile_cached through a
// DiskProgramCache, miss then hit) -> cache artefact (that cache exported to one file, imported
// into a fresh folder, found there with NVRTC called 0 times) -> bundle (a kernel that includes
// <cuda/std/cmath> compiled from a header bundle file, no include path, the same cubin as from the
// toolkit's folder) -> fatbin (saxpy for sm_80, sm_90 and compute_90 in one call, nvFatbin) ->
// serialize (save, load, compare) -> load lazily -> SAXPY -> templated reduction -> driver log (a
// refused allocation in the driver's words) -> graph (SAXPY + reduction captured once, replayed
// 100 times) -> nvcc-style kernel (standard headers under NVRTC, a compile cancelled from another
// thread) -> slices (part of a buffer, and the driver's pointer attributes), then a one-line
// summary. Without a GPU the code is still compiled, linked, cached and serialized (for sm_90)
// and every GPU part prints SKIPPED. A failed check does not stop the later steps; it makes the
// exit code 1.
//
// Everything written to disk goes to a fresh private temporary directory that is removed at the
// end, so the demo never touches the user's program cache and always sees a miss, then a hit.
#include "commands.hpp"
#include "demo/demo.hpp"

#include "cudacore/system.hpp"

#include <cstdio>

namespace cudacore::cli {

namespace {

using namespace demo;

void step_devices(Demo& demo) {
    std::printf("== devices\n");
    if (!system::driver_available()) {
        demo.no_gpu_reason = "no CUDA driver on this machine";
    } else if (system::device_count() == 0) {
        demo.no_gpu_reason = "the driver reports no device";
    } else {
        for (const Device& device : system::devices())
            std::printf("device %d: %s (%s)\n", device.ordinal(), device.name().c_str(),
                        device.arch().c_str());
        demo.device.emplace(0);
        demo.outcomes.passed("devices");
    }
    if (!demo.device) {
        std::printf("SKIPPED: %s; GPU steps are skipped\n", demo.no_gpu_reason.c_str());
        demo.outcomes.skipped("devices", demo.no_gpu_reason);
    }
    demo.arch = demo.device ? demo.device->arch() : "sm_90";
}

// Runs one step; an exception fails that step (with its message) and the demo goes on.
void run_step(Demo& demo, const char* name, void (*step)(Demo&)) {
    try {
        step(demo);
    } catch (const std::exception& e) {
        std::printf("FAILED: %s\n", e.what());
        demo.outcomes.failed(name);
    }
}

}  // namespace

void add_demo_command(CLI::App& app) {
    auto* command = app.add_subcommand("demo", "Run the end-to-end demo");
    command->callback([] {
        Demo demo;
        run_step(demo, "devices", step_devices);
        run_step(demo, "compile", step_compile);
        run_step(demo, "link", step_link);
        run_step(demo, "cache", step_cache);
        run_step(demo, "cache artefact", step_cache_artefact);
        run_step(demo, "bundle", step_bundle);
        run_step(demo, "fatbin", step_fatbin);
        run_step(demo, "serialize", step_serialize);
        run_step(demo, "load", step_load);
        run_step(demo, "saxpy", step_saxpy);
        run_step(demo, "reduction", step_reduction);
        run_step(demo, "driver log", step_driver_log);
        run_step(demo, "graph", step_graph);
        run_step(demo, "nvcc-style", step_nvcc_style);
        run_step(demo, "slices", step_slices);
        demo.scratch.reset();  // the temporary directory goes before the summary is printed
        std::printf("summary: %s\n", demo.outcomes.summary().c_str());
        std::fflush(stdout);
        if (demo.outcomes.any_failed()) throw CLI::RuntimeError(1);
    });
}

}  // namespace cudacore::cli
