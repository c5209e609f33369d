// `cudacore demo`: the main job, end to end, saying clearly what it skipped.
#include "commands.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/system.hpp"

#include <cstdio>

namespace cudacore::cli {

void add_demo_command(CLI::App& app) {
    auto* command = app.add_subcommand("demo", "Run the end-to-end demo");
    command->callback([] {
        std::printf("== devices\n");
        if (!system::driver_available()) {
            std::printf("SKIPPED: no CUDA driver on this machine; GPU steps are skipped\n");
            return;
        }
        for (const Device& device : system::devices())
            std::printf("device %d: %s (%s)\n", device.ordinal(), device.name().c_str(),
                        device.arch().c_str());
        if (system::device_count() == 0) std::printf("SKIPPED: the driver reports no device\n");
    });
}

}  // namespace cudacore::cli
