// `cudacore compile SRC -o OUT`: CUDA C++ (or PTX) to cubin, PTX or LTO-IR, written raw; with a
// list of targets (--arch sm_80,sm_90,compute_90), one fatbin holding them all.
#include "commands.hpp"
#include "loader/compiler_apis.hpp"

#include "file_io.hpp"
#include "remote_option.hpp"

#include "cudacore/cache_artefact.hpp"
#include "cudacore/cached_compile.hpp"
#include "cudacore/disk_program_cache.hpp"
#include "cudacore/code_inspection.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/fatbin_compile.hpp"
#include "cudacore/program.hpp"
#include "cudacore/tiered_program_cache.hpp"

#include "code/nvrtc_compile.hpp"
#include "headers/pch_directory.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

namespace cudacore::cli {

namespace {

struct CompileArgs {
    std::string source_path;
    std::string output_path;
    std::string arch;         // empty: the current device's
    std::string target = "cubin";
    std::string source_type;  // "c++" or "ptx"; empty: from the extension (.ptx is PTX)
    std::string name;         // empty: the source's file name
    std::vector<std::string> defines;
    std::vector<std::string> include_dirs;
    std::vector<std::string> name_expressions;
    std::vector<std::string> header_bundles;  // bundle files, searched in order
    std::string std;
    std::vector<std::string> nvrtc_flags;  // given to NVRTC as they are (ProgramOptions::extra_flags)
    bool rdc = false;
    bool lto = false;
    bool debug = false;
    bool lineinfo = false;
    bool no_toolkit_include = false;
    bool use_cache = true;    // the program cache (CUDACORE_DISABLE_CACHE=1 also turns it off)
    bool serialize = false;   // write the serialized ObjectCode instead of the raw code
    std::string manifest;     // appends the keys of the program's cache entries here
    RemoteArguments remote;  // a Redis cache (else $CUDACORE_REMOTE_CACHE)
};

void add_compile_options(CLI::App& command, CompileArgs& args) {
    command.add_option("source", args.source_path, "CUDA C++ or PTX source file")->required();
    command.add_option("-o,--output", args.output_path, "Where to write the compiled code")
        ->required();
    command.add_option("--arch", args.arch,
                       "Target arch, e.g. sm_90 (default: current device); a comma-separated list "
                       "(sm_80,sm_90,compute_90: cubins for sm_, PTX for compute_, LTO-IR for lto_) "
                       "makes one fatbin");
    command.add_option("--target", args.target, "What to produce (fatbin: implied by an --arch list)")
        ->check(CLI::IsMember({"cubin", "ptx", "ltoir", "fatbin"}));
    command.add_option("--source-type", args.source_type, "Source language (default: .ptx is PTX)")
        ->check(CLI::IsMember({"c++", "ptx"}));
    command.add_option("--name", args.name,
                       "Program name in logs and in the code (default: the source path). Quoted "
                       "includes of the source are looked for in this name's folder first");
    command.add_option("-D,--define", args.defines, "Define a macro: NAME or NAME=VALUE");
    command.add_option("-I,--include", args.include_dirs, "Add an include directory");
    command.add_option("--name-expr", args.name_expressions,
                       "Name expression to instantiate and lower, e.g. 'scale<float>'");
    command.add_option("--std", args.std, "C++ dialect, e.g. c++17");
    command.add_option("--nvrtc-flag", args.nvrtc_flags,
                       "A flag given to NVRTC as it is, after the others (ProgramOptions::extra_flags), "
                       "e.g. --nvrtc-flag=--use_fast_math or --nvrtc-flag=-maxrregcount=32; repeatable, "
                       "and part of the cache key as every flag is")
        ->allow_extra_args(false);
    command.add_flag("--rdc", args.rdc, "Relocatable device code (for linking)");
    command.add_flag("--lto", args.lto, "Link-time optimisation (implied by --target ltoir)");
    command.add_flag("-G,--debug", args.debug, "Device debug information");
    command.add_flag("--lineinfo", args.lineinfo, "Line information");
    command.add_flag("--no-toolkit-include", args.no_toolkit_include,
                     "Do not put the toolkit's headers (and CCCL) on the include path");
    command.add_option("--header-bundle", args.header_bundles,
                       "A header bundle file (`cudacore bundle`) whose headers the compile reads "
                       "from memory; repeatable, the first bundle holding a name wins. The "
                       "toolkit's folders are then not searched");
    command.add_flag("--cache,!--no-cache", args.use_cache,
                     "Use the program cache in $CUDACORE_CACHE_DIR (else $XDG_CACHE_HOME/cudacore or "
                     "~/.cache/cudacore); on by default, CUDACORE_DISABLE_CACHE=1 turns it off");
    command.add_flag("--serialize", args.serialize,
                     "Write the serialized ObjectCode (name, type, symbols, checksum) instead of "
                     "the raw code; read it back with ObjectCode::from_saved or `cudacore inspect`");
    command.add_option("--manifest", args.manifest,
                       "Append the keys of the program's cache entries to this file, one a line, "
                       "for `cudacore cache export --keys`");
    add_remote_option(command, args.remote);
}

// Appends the keys of `program`'s entries in the cache to the manifest `path`.
void append_to_manifest(const std::string& path, const Program& program, CodeType target,
                        const std::vector<std::string>& name_expressions,
                        const CompileOptions& options) {
    if (options.cache == nullptr)
        throw InvalidArgumentError("--manifest needs the program cache (it is off)");
    const std::vector<CacheKey> keys = cached_entry_keys(program, target, name_expressions, options);
    if (keys.empty())
        throw CacheError("--manifest: the program's code is not in the cache (see the warnings above)");
    std::ofstream out(path, std::ios::app);
    for (const CacheKey& key : keys) out << key.hex() << '\n';
    out.flush();
    if (!out) throw InvalidArgumentError("--manifest: cannot append to '" + path + "'");
}

// The user's disk cache, in front of the remote one when --remote or $CUDACORE_REMOTE_CACHE names
// one; nullptr when caching is off (--no-cache, CUDACORE_DISABLE_CACHE). A disk cache that cannot
// be used (an unsafe directory, say) is reported and the compile goes on without it.
std::unique_ptr<ProgramCache> open_cache(const CompileArgs& args) {
    if (!args.use_cache || cache_disabled_by_environment()) return nullptr;
    std::unique_ptr<ProgramCache> disk;
    try {
        disk = open_default_program_cache();
    } catch (const CacheError& e) {
        std::cerr << "cudacore: warning: compiling without the "
                  << (remote_cache_named(args.remote) ? "disk " : "")
                  << "cache: " << e.what() << "\n";
    }
    std::optional<RemoteCacheUse> opened = open_remote_cache(args.remote);
    if (!opened) return disk;
    // One warning per failure: the remote tier's are printed by the warning handler only.
    std::shared_ptr<ProgramCache> remote = std::move(opened->tier);
    std::vector<std::shared_ptr<ProgramCache>> tiers;
    if (disk) tiers.push_back(std::shared_ptr<ProgramCache>(std::move(disk)));
    tiers.push_back(std::move(remote));
    return std::make_unique<TieredProgramCache>(std::move(tiers));
}

SourceType source_type_of(const CompileArgs& args) {
    if (!args.source_type.empty()) return args.source_type == "ptx" ? SourceType::ptx : SourceType::cxx;
    return std::filesystem::path(args.source_path).extension() == ".ptx" ? SourceType::ptx
                                                                         : SourceType::cxx;
}

ProgramOptions to_program_options(const CompileArgs& args) {
    ProgramOptions options;
    // The source's path, as nvcc names it: NVRTC looks for the main file's quoted includes in
    // the folder of the program's name, so `compile sub/s.cu` finds sub/v.h as nvcc does.
    options.name = args.name.empty() ? args.source_path : args.name;
    if (!args.arch.empty()) options.arch = args.arch;
    add_defines(options, args.defines);
    options.include_path = args.include_dirs;
    if (!args.std.empty()) options.std = args.std;
    options.extra_flags = args.nvrtc_flags;
    if (args.rdc) options.relocatable_device_code = true;
    if (args.lto) options.link_time_optimization = true;
    if (args.debug) options.debug = true;
    if (args.lineinfo) options.lineinfo = true;
    options.toolkit_include_path = !args.no_toolkit_include;
    for (const auto& path : args.header_bundles) options.header_bundles.push_back(HeaderBundle::load(path));
    // A PTX file from anywhere: nvJitLink runs in a worker. Without nvJitLink, the driver's
    // linker compiles it in this process, as a library program does. (Asked only for PTX: a C++
    // compile's cache hit opens no compiler.)
    options.isolated_link = source_type_of(args) == SourceType::ptx && detail::nvjitlink_available();
    return options;
}

// "sm_80,sm_90,compute_90" -> its targets; one arch (or none) -> itself.
std::vector<std::string> split_arch_list(const std::string& arch) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= arch.size() && !arch.empty()) {
        const std::size_t comma = std::min(arch.find(',', start), arch.size());
        out.push_back(arch.substr(start, comma - start));
        start = comma + 1;
    }
    return out;
}

// One fatbin of every target, each compiled through the cache as compile_many does; its images
// are listed on stderr, the lowered names on stdout as for one target.
void compile_fatbin_to_file(const Program& program, const std::vector<std::string>& targets,
                            const CompileArgs& args, ProgramCache* cache) {
    if (args.target != "fatbin" && args.target != "cubin") {
        throw InvalidArgumentError("compile: a list of archs makes a fatbin, not " + args.target +
                                   " (each target's prefix says what it holds: sm_, compute_, lto_)");
    }
    if (targets.empty()) throw InvalidArgumentError("compile: --target fatbin needs --arch with its targets");
    const ObjectCode code = [&] {
        try {
            return compile_fatbin(program, targets, args.name_expressions, {.cache = cache});
        } catch (const CompileError& e) {
            print_failure(e, e.log());
            throw CLI::RuntimeError(1);
        }
    }();
    const CodeInfo info = inspect_code(code);
    std::cerr << "cudacore: fatbin of " << info.entries.size() << " images, " << code.size() << " bytes\n";
    const std::string serialized = args.serialize ? code.serialize() : std::string();
    write_output_file(args.output_path, args.serialize ? std::string_view(serialized) : code.code());
    for (const auto& [expression, lowered] : code.symbol_map())
        std::cout << expression << " -> " << lowered << "\n";
}

void run_compile(const CompileArgs& args) {
    std::string source = read_input_file(args.source_path);
    ProgramOptions options = to_program_options(args);
    CompileArgs effective = args;
    if (source_type_of(args) == SourceType::cxx) {
        // A C++ compile writes to the temporary directory (NVRTC's precompiled header; the
        // header record the cache keys on). When it cannot take them, both are turned off with
        // one warning naming the folder and why, and the compile goes on.
        const auto place = detail::automatic_pch_directory(detail::pch_heap_size());
        if (!place.problem.empty()) {
            const bool cache = args.use_cache && !cache_disabled_by_environment();
            std::cerr << "cudacore: warning: compiling without "
                      << (cache ? "the cache and precompiled headers" : "precompiled headers")
                      << ": " << place.problem << "\n";
            options.pch = false;
            effective.use_cache = false;
        }
    }
    const std::vector<std::string> targets = split_arch_list(args.arch);
    const bool fatbin = targets.size() > 1 || args.target == "fatbin";
    if (fatbin) options.arch.reset();  // each target's compile sets its own
    Program program(std::move(source), source_type_of(args), std::move(options));
    const std::unique_ptr<ProgramCache> cache = open_cache(effective);
    if (fatbin) {
        if (!args.manifest.empty())
            throw InvalidArgumentError("--manifest takes one target, not a fatbin's list");
        compile_fatbin_to_file(program, targets, args, cache.get());
        return;
    }
    const CodeType target = code_type_from_string(args.target);
    CompileOptions cache_options;
    cache_options.cache = cache.get();
    // A cache that cannot be read or store is a warning: the compile goes on.
    cache_options.on_cache_error = [](const CacheError& e) {
        std::cerr << "cudacore: warning: compiling without the cache: " << e.what() << "\n";
    };
    // Looked up first, so that "cache hit" is said only of code that came from the cache (a
    // missing or corrupt entry is compiled again, and says nothing).
    std::optional<ObjectCode> hit;
    if (cache) hit = find_cached(program, target, effective.name_expressions, cache_options);
    ObjectCode code = hit ? *hit : [&] {
        try {
            return compile_cached(program, target, args.name_expressions, cache_options);
        } catch (const CompileError& e) {
            print_failure(e, e.log());
            throw CLI::RuntimeError(1);
        }
    }();
    if (!program.log().empty()) std::cerr << program.log() << "\n";
    if (hit) std::cerr << "cudacore: cache hit\n";
    if (!args.manifest.empty())
        append_to_manifest(args.manifest, program, target, effective.name_expressions, cache_options);
    const std::string serialized = args.serialize ? code.serialize() : std::string();
    write_output_file(args.output_path, args.serialize ? std::string_view(serialized) : code.code());
    for (const auto& [expression, lowered] : code.symbol_map())
        std::cout << expression << " -> " << lowered << "\n";
}

}  // namespace

void add_compile_command(CLI::App& app) {
    auto* command = app.add_subcommand(
        "compile", "Compile CUDA C++ or PTX to cubin, PTX or LTO-IR, or for several archs to one fatbin");
    auto args = std::make_shared<CompileArgs>();
    add_compile_options(*command, *args);
    command->callback([args] { run_compile(*args); });
}

}  // namespace cudacore::cli
