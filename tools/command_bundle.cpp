// `cudacore bundle`: makes a header bundle file (HeaderBundle) from entry headers and include
// folders, or from the headers a compile of a source reads; `--list` shows a bundle's contents.
#include "commands.hpp"

#include "file_io.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/program_options.hpp"
#include "cudacore/header_bundle.hpp"
#include "cudacore/program.hpp"

#include <filesystem>
#include <iostream>
#include <memory>

namespace cudacore::cli {

namespace {

struct BundleArgs {
    std::vector<std::string> headers;
    std::vector<std::string> include_dirs;
    std::string from_compile;  // a source whose compile's headers make the bundle
    std::string list;          // a bundle file to list
    std::string output_path;
    std::string name;          // empty: the output's file name
    std::vector<std::string> archs;  // --from-compile: one (empty: the current device's)
    std::string std;
    std::vector<std::string> defines;
    bool no_toolkit_include = false;
    bool allow_outside = false;
};

std::vector<std::filesystem::path> search_folders(const BundleArgs& args) {
    std::vector<std::filesystem::path> folders(args.include_dirs.begin(), args.include_dirs.end());
    if (!args.no_toolkit_include)
        for (const auto& dir : toolkit_include_dirs()) folders.emplace_back(dir);
    return folders;
}

// The headers a compile of `args.from_compile` reads, as a bundle: the source's own folder
// first (its quoted includes), then the -I folders and the toolkit's.
HeaderBundle bundle_from_compile(const BundleArgs& args, const std::string& name) {
    ProgramOptions options;
    options.name = args.from_compile;
    if (args.archs.size() > 1)
        throw InvalidArgumentError("bundle: --from-compile compiles for one --arch; give several "
                                   "with --header, which preprocesses for each");
    if (!args.archs.empty()) options.arch = args.archs.front();
    if (!args.std.empty()) options.std = args.std;
    add_defines(options, args.defines);
    options.include_path = args.include_dirs;
    options.toolkit_include_path = !args.no_toolkit_include;
    options.pch = false;
    Program program(read_input_file(args.from_compile), SourceType::cxx, options);
    std::vector<std::string> headers_read;
    try {
        program.compile(CodeType::ptx, {}, headers_read);
    } catch (const CompileError& e) {
        print_failure(e, e.log());
        throw CLI::RuntimeError(1);
    }
    std::vector<std::filesystem::path> folders{
        std::filesystem::absolute(args.from_compile).parent_path()};
    for (const auto& folder : search_folders(args)) folders.push_back(folder);
    return HeaderBundle::from_headers_read(headers_read, folders, name, args.allow_outside);
}

void list_bundle(const std::string& path) {
    const HeaderBundle bundle = HeaderBundle::load(path);
    std::cout << "name     " << bundle.name() << "\n"
              << "headers  " << bundle.size() << "\n"
              << "bytes    " << bundle.content_size() << "\n"
              << "digest   " << bundle.digest() << "\n";
    for (const auto& header : bundle.headers())
        std::cout << "  " << header.name << "  " << header.content.size() << "\n";
}

void run_bundle(const BundleArgs& args) {
    if (!args.list.empty()) {
        if (!args.headers.empty() || !args.from_compile.empty() || !args.output_path.empty())
            throw InvalidArgumentError("bundle: --list reads a bundle; it takes no --header, "
                                       "--from-compile or --output");
        list_bundle(args.list);
        return;
    }
    if (args.output_path.empty())
        throw InvalidArgumentError("bundle: --output is required to make a bundle");
    if (args.headers.empty() == args.from_compile.empty())
        throw InvalidArgumentError("bundle: give entry headers (--header) or a source "
                                   "(--from-compile), one of the two");
    const std::string name = args.name.empty()
                                 ? std::filesystem::path(args.output_path).stem().string()
                                 : args.name;
    const HeaderBundle bundle =
        args.from_compile.empty()
            ? HeaderBundle::from_include_folders(args.headers, search_folders(args), name,
                                                 {.defines = args.defines,
                                                  .std = args.std,
                                                  .archs = args.archs,
                                                  .allow_outside_folders = args.allow_outside})
            : bundle_from_compile(args, name);
    const std::string bytes = bundle.serialize();
    write_output_file(args.output_path, bytes);
    std::cerr << "cudacore: bundle " << bundle.describe() << ", " << bundle.content_size()
              << " bytes of headers in " << bytes.size() << " bytes\n";
}

}  // namespace

void add_bundle_command(CLI::App& app) {
    auto* command = app.add_subcommand(
        "bundle", "Make a header bundle (headers in one file, for compiles without a toolkit), "
                  "or list one");
    auto args = std::make_shared<BundleArgs>();
    command->add_option("--header", args->headers,
                        "An entry header, as an #include names it: cuda_fp16.h, '<cuda/std/cmath>'; "
                        "it and every header the preprocessor opens for it (with -D, --std, "
                        "--arch) go in the bundle");
    command->add_option("-I,--include", args->include_dirs,
                        "An include folder, searched before the toolkit's");
    command->add_flag("--no-toolkit-include", args->no_toolkit_include,
                      "Do not search the toolkit's include folders (and CCCL)");
    command->add_option("--from-compile", args->from_compile,
                        "A CUDA C++ source: the bundle holds the headers its compile reads "
                        "(with -I, -D, --std, --arch)");
    command->add_option("-D,--define", args->defines, "Define a macro for the preprocessor");
    command->add_option("--std", args->std, "C++ dialect, e.g. c++17");
    command->add_option("--arch", args->archs,
                        "Target arch, e.g. sm_90; with --header a list (sm_80,sm_90: the bundle "
                        "holds what any of them reads; default: NVRTC's), with --from-compile "
                        "one (default: current device)")
        ->delimiter(',');
    command->add_flag("--allow-outside", args->allow_outside,
                      "Take headers that lie outside every include folder (named by their "
                      "absolute paths); by default they are refused, each named");
    command->add_option("-o,--output", args->output_path, "Where to write the bundle");
    command->add_option("--name", args->name,
                        "The bundle's name in messages (default: the output's file name)");
    command->add_option("--list", args->list, "List the headers of this bundle file");
    command->callback([args] { run_bundle(*args); });
}

}  // namespace cudacore::cli
