#include "cudacore/fatbin_compile.hpp"

#include "cache/compile/compile_many_outcomes.hpp"
#include "cudacore/errors.hpp"
#include "loader/nvfatbin_api.hpp"

#include <algorithm>
#include <chrono>

namespace cudacore {

namespace {

// With threads, the targets compile one after another in the calling thread, and other threads
// join only for what is left this long after the start. NVRTC's threads share its locks: four
// small targets (about 10 ms each on a 16-core host) took 47.3 ms in four threads against
// 41.1 ms one after another, while a <cuda/std> kernel's targets (hundreds of ms each) gained
// at most 5% from threads. Small programs thus never wait on each other's locks, and large ones
// lose at most this much of their overlap (bench/fatbin_bench).
constexpr std::chrono::milliseconds kTargetThreadsAfter{50};

// The targets, read and checked before anything compiles.
std::vector<FatbinTarget> parse_fatbin_targets(const std::vector<std::string>& targets, const char* operation) {
    if (targets.empty()) {
        throw InvalidArgumentError(std::string(operation) +
                                   ": no targets (give sm_XX for cubins, compute_XX for PTX)");
    }
    std::vector<FatbinTarget> parsed;
    for (std::size_t i = 0; i < targets.size(); ++i) {
        if (std::find(targets.begin(), targets.begin() + static_cast<std::ptrdiff_t>(i), targets[i]) !=
            targets.begin() + static_cast<std::ptrdiff_t>(i)) {
            throw InvalidArgumentError(std::string(operation) + ": target '" + targets[i] +
                                       "' is named twice");
        }
        parsed.push_back(parse_fatbin_target(targets[i]));
    }
    return parsed;
}

// The program compiled for one target: its options with that arch (and LTO for LTO-IR).
Program program_for_target(const Program& program, const FatbinTarget& target) {
    ProgramOptions options = program.options();
    options.arch = target.arch;
    if (target.type == CodeType::ltoir) options.link_time_optimization = true;
    return Program(program.source(), program.source_type(), std::move(options));
}

}  // namespace

FatbinTarget parse_fatbin_target(std::string_view target) {
    struct Form {
        std::string_view prefix;
        CodeType type;
    };
    for (const Form& form : {Form{"sm_", CodeType::cubin}, Form{"compute_", CodeType::ptx},
                             Form{"lto_", CodeType::ltoir}}) {
        if (target.substr(0, form.prefix.size()) != form.prefix) continue;
        try {
            const std::string number = fatbin_arch_number(target);
            // LTO-IR is compiled with the real arch of the same number.
            return {form.type == CodeType::ltoir ? "sm_" + number : std::string(target), form.type};
        } catch (const InvalidArgumentError&) {
            break;
        }
    }
    throw InvalidArgumentError("fatbin target '" + std::string(target) +
                               "' is not one of sm_XX (a cubin), compute_XX (PTX) or lto_XX "
                               "(LTO-IR), XX two or three digits, optionally followed by a or f");
}

ObjectCode compile_fatbin(const Program& program, const std::vector<std::string>& targets,
                          const std::vector<std::string>& name_expressions, const CompileOptions& options,
                          const FatbinOptions& fatbin) {
    const std::vector<FatbinTarget> parsed = parse_fatbin_targets(targets, "compile_fatbin");
    std::vector<Program> programs;
    programs.reserve(parsed.size());
    std::vector<CodeType> types;
    for (const FatbinTarget& target : parsed) {
        programs.push_back(program_for_target(program, target));
        types.push_back(target.type);
    }
    std::vector<Program*> each;
    for (Program& copy : programs) each.push_back(&copy);
    const std::vector<const std::vector<std::string>*> names(parsed.size(), &name_expressions);
    // No first compile alone for its PCH: each target's flags differ (-arch), so no target could
    // use another's PCH, and waiting for it would only serialise the first compile.
    CompileOptions many = options;
    many.first_alone_for_pch = false;
    std::vector<detail::ManyOutcome> outcomes = detail::compile_many_outcomes(
        each, types, names, many, nullptr, "compile_fatbin", kTargetThreadsAfter);
    // The failure first, whichever target had it: the targets it stopped have no code.
    for (const detail::ManyOutcome& outcome : outcomes)
        if (outcome.failure) std::rethrow_exception(outcome.failure);
    FatbinBuilder builder(fatbin);
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
        if (!outcomes[i].code) {
            throw Error("compile_fatbin: target '" + targets[i] + "' of program '" +
                        program.options().name + "' was not compiled (an earlier failure stopped the pool)");
        }
        builder.add(*outcomes[i].code, targets[i]);
    }
    return builder.build(program.options().name);
}

CacheKey fatbin_cache_key(const Program& program, const std::vector<std::string>& targets,
                          const std::vector<std::string>& name_expressions, const FatbinOptions& fatbin) {
    const std::vector<FatbinTarget> parsed = parse_fatbin_targets(targets, "fatbin_cache_key");
    std::string text = "cudacore-fatbin-key-v1";
    auto field = [&](std::string_view value) {
        text += '\n' + std::to_string(value.size()) + ':';
        text += value;
    };
    for (std::size_t i = 0; i < parsed.size(); ++i) {
        field(targets[i]);
        field(cache_key(program_for_target(program, parsed[i]), parsed[i].type, name_expressions).hex());
    }
    field(!fatbin.compress ? "no-compress" : fatbin.compress_all ? "compress-all" : "compress");
    std::string version = "none";
    try {
        version = detail::nvfatbin_version();
    } catch (const LoaderError&) {
    }
    field(version);
    return CacheKey::of_bytes(text);
}

// The deprecated form, with both options in one struct.
ObjectCode compile_fatbin(const Program& program, const std::vector<std::string>& targets,
                          const std::vector<std::string>& name_expressions,
                          const FatbinCompileOptions& options) {
    return compile_fatbin(program, targets, name_expressions, options.many, options.fatbin);
}

}  // namespace cudacore
