// The subcommands of the cudacore CLI. Each registers its options and callback on the app.
#pragma once

#include "cudacore/errors.hpp"
#include "cudacore/program_options.hpp"

#include <CLI/CLI.hpp>

#include <iostream>
#include <string>
#include <vector>

namespace cudacore::cli {

void add_devices_command(CLI::App& app);
void add_demo_command(CLI::App& app);
void add_compile_command(CLI::App& app);
void add_link_command(CLI::App& app);
void add_inspect_command(CLI::App& app);
void add_cache_command(CLI::App& app);
void add_bundle_command(CLI::App& app);

// A compile or link failure: the error's heading, then the whole log. The heading already quotes
// the log's first error line; with the log following, that line would be printed twice, so the
// heading is cut before it.
inline void print_failure(const Error& error, const std::string& log) {
    std::string heading = error.what();
    if (const std::string line = first_error_line(log);
        !line.empty() && heading.ends_with(": " + line))
        heading.resize(heading.size() - line.size() - 2);
    std::cerr << "cudacore: " << heading << (log.empty() ? "" : ":\n") << log << "\n";
}

// -D arguments (NAME or NAME=VALUE, as nvcc takes them) added to `options.define_macro`.
inline void add_defines(ProgramOptions& options, const std::vector<std::string>& defines) {
    for (const auto& define : defines) {
        const auto equals = define.find('=');
        if (equals == std::string::npos)
            options.define_macro.push_back({define, std::nullopt});
        else
            options.define_macro.push_back({define.substr(0, equals), define.substr(equals + 1)});
    }
}
}  // namespace cudacore::cli
