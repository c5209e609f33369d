// The subcommands of the cudacore CLI. Each registers its options and callback on the app.
#pragma once

#include <CLI/CLI.hpp>

namespace cudacore::cli {

void add_devices_command(CLI::App& app);
void add_demo_command(CLI::App& app);
void add_compile_command(CLI::App& app);
void add_link_command(CLI::App& app);
void add_inspect_command(CLI::App& app);
void add_cache_command(CLI::App& app);
}  // namespace cudacore::cli
