// `cudacore link IN... -o OUT`: inputs of any code type (told from their bytes) linked into one
// cubin or PTX file, by nvJitLink in a worker process (LinkerOptions::isolated).
#include "commands.hpp"

#include "file_io.hpp"

#include "cudacore/code_inspection.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/linker.hpp"

#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string_view>

namespace cudacore::cli {

namespace {

struct LinkArgs {
    std::vector<std::string> input_paths;
    std::string output_path;
    std::string arch;  // empty: the current device's
    std::string target = "cubin";
    bool lto = false;
    bool verbose = false;
    // The worker is killed after this long (0: no limit): a stopped or looping worker must not
    // hold the CLI for ever; real links take seconds.
    unsigned worker_timeout_seconds = 600;
};

void run_link(const LinkArgs& args) {
    std::vector<ObjectCode> inputs;
    for (const auto& path : args.input_paths) {
        std::string bytes = read_input_file(path);
        const auto type = try_detect_code_type(bytes);
        if (!type) {
            throw InvalidArgumentError("link input '" + path +
                                       "' is not a cubin, fatbin, PTX, LTO-IR, object or library");
        }
        inputs.push_back(ObjectCode::from_bytes(*type, std::move(bytes),
                                                std::filesystem::path(path).filename().string()));
    }
    LinkerOptions options;
    options.name = std::filesystem::path(args.output_path).filename().string();
    if (!args.arch.empty()) options.arch = args.arch;
    if (args.lto) options.link_time_optimization = true;
    if (args.verbose) options.verbose = true;
    // The inputs come from anywhere: nvJitLink crashing on one ends the worker, not the CLI.
    options.isolated = true;
    options.isolated_timeout = std::chrono::seconds(args.worker_timeout_seconds);

    Linker linker(std::move(inputs), options);
    ObjectCode linked = [&] {
        try {
            return linker.link(code_type_from_string(args.target));
        } catch (const LinkError& e) {
            print_failure(e, e.log());
            if (args.worker_timeout_seconds > 0 &&
                std::string_view(e.what()).find("killed after the time limit") != std::string::npos) {
                std::cerr << "cudacore: the link worker ran longer than --worker-timeout ("
                          << args.worker_timeout_seconds << " s); raise it, or 0 for no limit\n";
            }
            throw CLI::RuntimeError(1);
        }
    }();
    if (!linker.info_log().empty()) std::cerr << linker.info_log() << "\n";
    write_output_file(args.output_path, linked.code());
}

}  // namespace

void add_link_command(CLI::App& app) {
    auto* command = app.add_subcommand("link", "Link cubin, PTX, LTO-IR, fatbin, object or library "
                                               "files into a cubin or PTX");
    auto args = std::make_shared<LinkArgs>();
    command->add_option("inputs", args->input_paths, "Files to link (type told from the bytes)")
        ->required();
    command->add_option("-o,--output", args->output_path, "Where to write the linked code")
        ->required();
    command->add_option("--arch", args->arch, "Target arch, e.g. sm_90 (default: current device)");
    command->add_option("--target", args->target, "What to produce")
        ->check(CLI::IsMember({"cubin", "ptx"}));
    command->add_flag("--lto", args->lto, "Link-time optimisation (needed for LTO-IR inputs)");
    command->add_flag("-v,--verbose", args->verbose, "Print the linker's info log");
    command->add_option("--worker-timeout", args->worker_timeout_seconds,
                        "Seconds after which the link worker process is killed and the link "
                        "fails (0: no limit)")
        ->capture_default_str();
    command->callback([args] { run_link(*args); });
}

}  // namespace cudacore::cli
