// `cudacore devices`: each device's properties, like deviceQuery.
#include "commands.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/system.hpp"

#include <cstdio>
#include <iostream>
#include <memory>

namespace cudacore::cli {

namespace {

void print_device(const Device& device, bool all_attributes) {
    const auto cc = device.compute_capability();
    std::printf("Device %d: %s\n", device.ordinal(), device.name().c_str());
    std::printf("  arch                   %s (compute capability %d.%d)\n", device.arch().c_str(),
                cc.major, cc.minor);
    std::printf("  uuid                   %s\n", device.uuid_string().c_str());
    std::printf("  pci bus id             %s\n", device.pci_bus_id().c_str());
    std::printf("  total memory           %.1f GiB\n",
                static_cast<double>(device.total_memory()) / (1024.0 * 1024.0 * 1024.0));
    std::printf("  multiprocessors        %d\n", device.multiprocessor_count());
    std::printf("  max threads per block  %d\n",
                device.attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK));
    std::printf("  shared memory / block  %d bytes (opt-in %d)\n",
                device.attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK),
                device.attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN));
    std::printf("  clock rate             %d kHz\n", device.attribute(CU_DEVICE_ATTRIBUTE_CLOCK_RATE));
    std::printf("  memory pools           %s\n",
                device.attribute(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED) ? "yes" : "no");
    if (all_attributes) {
        std::printf("  attributes:\n");
        for (const auto& [name, value] : device.attributes())
            std::printf("    %-52s %d\n", name.c_str(), value);
    }
}

}  // namespace

void add_devices_command(CLI::App& app) {
    auto* command = app.add_subcommand("devices", "List CUDA devices and their properties");
    auto all = std::make_shared<bool>(false);
    command->add_flag("--all", *all, "Print every device attribute");
    command->callback([all] {
        try {
            const int version = system::driver_version();
            std::printf("CUDA driver %d.%d (%s), cudacore built for CUDA %d.%d\n", version / 1000,
                        version % 1000 / 10, system::driver_path().c_str(),
                        system::built_cuda_version() / 1000,
                        system::built_cuda_version() % 1000 / 10);
        } catch (const NoDriverError& e) {
            std::cout << "No CUDA driver: " << e.what() << "\n";
            return;  // not an error: this machine simply has no GPU
        }
        const int count = system::device_count();
        std::printf("%d device(s)\n", count);
        for (const Device& device : system::devices()) print_device(device, *all);
    });
}

}  // namespace cudacore::cli
