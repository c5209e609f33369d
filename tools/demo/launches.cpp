// `cudacore demo`: The launch steps: saxpy and the reduction run and checked against the CPU, and a refused
// allocation in the driver's own words.
#include "demo.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/event.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/system.hpp"

#include <cmath>
#include <cstdio>
#include <vector>

namespace cudacore::cli::demo {

void step_saxpy(Demo& demo) {
    std::printf("== saxpy on %zu random floats\n", kElements);
    if (!gpu_for(demo, "saxpy", "launching needs a GPU")) return;
    if (!made_by(demo, demo.saxpy, "saxpy", "compile")) return;
    const bool ok =
        launch_and_compare(*demo.device, demo.saxpy->get_kernel("saxpy"), saxpy_on_cpu);
    demo.outcomes.verify("saxpy", ok);
}

void step_reduction(Demo& demo) {
    std::printf("== reduction (%s) on %zu random floats\n", kReductionName, kElements);
    if (!gpu_for(demo, "reduction", "launching needs a GPU")) return;
    if (!made_by(demo, demo.reduction, "reduction", "compile")) return;
    const Device& device = *demo.device;
    Stream stream = device.create_stream();
    const std::vector<float> values = random_floats(kElements, 3);
    const unsigned blocks = 1024;
    Buffer input = device.allocate(kElements * sizeof(float), stream);
    Buffer partial = device.allocate(blocks * sizeof(float), stream);
    input.copy_from(values, stream);

    Kernel kernel = demo.reduction->get_kernel(kReductionName);
    Event start = stream.record(EventOptions{.timing_enabled = true});
    launch(stream, LaunchConfig{.grid = blocks, .block = 256}, kernel, input, partial, kElements);
    Event end = stream.record(EventOptions{.timing_enabled = true});
    std::vector<float> partials(blocks);
    partial.copy_to(partials, stream);
    stream.sync();

    double gpu = 0, cpu = 0;
    for (float p : partials) gpu += p;
    for (float v : values) cpu += v;
    const bool ok = std::fabs(gpu - cpu) <= 1e-3 * (1.0 + std::fabs(cpu));
    std::printf("kernel time %.3f ms (events); sum %.4f, CPU %.4f: %s\n", (end - start).count(),
                gpu, cpu, demo.outcomes.verify("reduction", ok));
}

void step_driver_log(Demo& demo) {
    std::printf("== driver log (why a driver call failed, in the driver's words: CUDA 12.9+)\n");
    if (!gpu_for(demo, "driver log", "a failing driver call needs a GPU")) return;
    Stream stream = demo.device->create_stream();
    try {
        Buffer huge = demo.device->allocate(std::size_t{1} << 50, stream);  // 1 PiB: refused
        std::printf("a 1 PiB allocation succeeded: %s\n", demo.outcomes.verify("driver log", false));
    } catch (const DriverError& error) {
        std::printf("a 1 PiB allocation: %s\n", error.what());
        // Drivers before 12.9 keep no log: the message is then the status alone.
        const bool has_log = system::driver_version() < 12090 || !error.driver_log().empty();
        std::printf("%zu line(s) from the driver's log, quoted in the message: %s\n",
                    error.driver_log().size(), demo.outcomes.verify("driver log", has_log));
    }
}

}  // namespace cudacore::cli::demo
