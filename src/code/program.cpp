#include "cudacore/program.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/linker.hpp"
#include "code/nvvm_compile.hpp"
#include "loader/compiler_apis.hpp"
#include "loader/driver_api.hpp"
#include "code/nvrtc_compile.hpp"

#include <memory>

namespace cudacore {

namespace {

const char* source_type_name(SourceType type) {
    switch (type) {
        case SourceType::cxx: return "C++";
        case SourceType::ptx: return "PTX";
        case SourceType::nvvm: return "NVVM IR";
    }
    return "unknown";
}

// -dlto asked for, by the option or among the extra flags.
bool asks_for_lto(const ProgramOptions& options) {
    if (options.link_time_optimization.value_or(false)) return true;
    for (const auto& flag : options.extra_flags)
        if (flag == "-dlto" || flag == "--dlto") return true;
    return false;
}

std::string describe(const ProgramOptions& options) { return "program '" + options.name + "'"; }

// The checks compile() and flags() share: which targets each source type can produce.
void require_supported_target(SourceType source_type, CodeType target,
                              const ProgramOptions& options) {
    if (source_type != SourceType::nvvm &&
        (!options.extra_sources.empty() || options.use_libdevice.has_value())) {
        throw InvalidArgumentError(describe(options) + ": extra_sources and use_libdevice are for "
                                   "NVVM IR programs (libNVVM links IR modules); a " +
                                   std::string(source_type_name(source_type)) +
                                   " program is one source: link separate programs with a Linker");
    }
    if (source_type == SourceType::nvvm) {
        if (target == CodeType::cubin && options.link_time_optimization.value_or(false)) {
            throw InvalidArgumentError(describe(options) + ": link_time_optimization makes NVVM "
                                       "produce LTO-IR, not cubin; compile to ltoir");
        }
        if (target == CodeType::cubin && options.arch && options.arch->rfind("compute_", 0) == 0) {
            throw InvalidArgumentError(describe(options) + ": a cubin needs a real arch (sm_NN), "
                                       "not the virtual " + *options.arch);
        }
        if (target == CodeType::ptx || target == CodeType::ltoir || target == CodeType::cubin)
            return;
        throw InvalidArgumentError(describe(options) + ": an NVVM IR program compiles to ptx, "
                                   "ltoir or cubin, not " + std::string(to_string(target)));
    }
    if (source_type == SourceType::cxx) {
        if (target == CodeType::cubin && options.link_time_optimization.value_or(false)) {
            throw InvalidArgumentError(describe(options) + ": link_time_optimization makes NVRTC "
                                       "produce LTO-IR, not cubin; compile to ltoir and link "
                                       "with a Linker using link_time_optimization");
        }
        if (target == CodeType::ptx && asks_for_lto(options)) {
            throw InvalidArgumentError(describe(options) + ": -dlto (link_time_optimization) makes "
                                       "NVRTC produce LTO-IR, not PTX; ask for CodeType::ltoir "
                                       "(or compile to ptx without link_time_optimization)");
        }
        if (target == CodeType::cubin && options.arch && options.arch->rfind("compute_", 0) == 0) {
            throw InvalidArgumentError(describe(options) + ": a cubin needs a real arch (sm_NN), "
                                       "not the virtual " + *options.arch);
        }
        if (target == CodeType::ptx || target == CodeType::cubin || target == CodeType::ltoir)
            return;
        throw InvalidArgumentError(describe(options) + ": a C++ program compiles to ptx, cubin or "
                                   "ltoir, not " + std::string(to_string(target)));
    }
    if (target != CodeType::cubin) {
        throw InvalidArgumentError(describe(options) + ": a PTX program compiles to cubin only, not " +
                                   std::string(to_string(target)));
    }
}

}  // namespace

Program::Program(std::string source, SourceType source_type, ProgramOptions options)
    : source_(std::move(source)), source_type_(source_type), options_(std::move(options)) {
    // Refused here, not at compile(): an unknown value would otherwise reach NVRTC as C++.
    if (source_type_ != SourceType::cxx && source_type_ != SourceType::ptx &&
        source_type_ != SourceType::nvvm) {
        throw InvalidArgumentError("Program: unknown source type " +
                                   std::to_string(static_cast<int>(source_type_)) + " for " +
                                   describe(options_) + " (SourceType::cxx, ptx or nvvm)");
    }
    if (source_.find_first_not_of(" \t\r\n") == std::string::npos) {
        throw InvalidArgumentError(std::string("Program: empty ") + source_type_name(source_type_) +
                                   " source for " + describe(options_));
    }
}

std::vector<std::string> Program::flags(CodeType target) const {
    require_supported_target(source_type_, target, options_);
    if (source_type_ == SourceType::cxx) return nvrtc_flags(options_, target == CodeType::ltoir);
    if (source_type_ == SourceType::nvvm) return nvvm_flags(options_, target == CodeType::ltoir);
    return Linker({ObjectCode::from_ptx(source_, options_.name)}, to_linker_options(options_))
        .flags();
}

std::string Program::backend() const {
    if (source_type_ == SourceType::cxx) return "NVRTC";
    if (source_type_ == SourceType::nvvm) return "NVVM";
    if (!detail::nvjitlink_available() && detail::driver_available()) return "driver";
    return "nvJitLink";
}

ObjectCode Program::compile(CodeType target, const std::vector<std::string>& name_expressions) {
    log_.clear();
    pch_status_ = {PchOutcome::not_attempted, "PTX programs include no headers", {}, 0};
    require_supported_target(source_type_, target, options_);

    if (source_type_ == SourceType::ptx) {
        if (!name_expressions.empty()) {
            throw InvalidArgumentError(describe(options_) +
                                       ": name expressions need a C++ program; a PTX program's "
                                       "kernels are reached by their PTX names");
        }
        Linker linker({ObjectCode::from_ptx(source_, options_.name)}, to_linker_options(options_));
        try {
            ObjectCode linked = linker.link(CodeType::cubin);
            log_ = linker.info_log();
            return ObjectCode::from_cubin(std::string(linked.code()), options_.name);
        } catch (const LinkError& e) {
            log_ = e.log();
            throw CompileError(options_.name, e.log(), e.options(), linker.backend());
        }
    }

    if (source_type_ == SourceType::nvvm) return compile_nvvm_program(target, name_expressions);

    const std::vector<std::string> flags = this->flags(target);
    const std::string object = describe(options_) + " (" + std::string(to_string(target)) + ")";
    const bool pch = uses_automatic_pch(options_) || options_.create_pch || options_.use_pch;
    if (!pch) {
        pch_status_ = {PchOutcome::not_attempted, "PCH is off (ProgramOptions::pch = false)", {}, 0};
    }
    if (options_.pch_heap_size) detail::set_pch_heap_size(*options_.pch_heap_size);

    detail::NvrtcAttempt attempt =
        detail::nvrtc_compile(source_, options_.name, flags, name_expressions, target, object, pch);
    std::vector<std::string> used_flags = flags;
    if (pch) {
        if (attempt.status != NVRTC_SUCCESS && detail::log_blames_pch(attempt.log)) {
            // The PCH machinery failed, not the code: compile again without it.
            pch_status_ = {PchOutcome::failed,
                           "NVRTC failed with PCH, compiled without it: " +
                               detail::pch_error_lines(attempt.log),
                           {}, 0};
            used_flags = detail::without_pch_flags(flags);
            attempt = detail::nvrtc_compile(source_, options_.name, used_flags, name_expressions,
                                            target, object, false);
        } else {
            pch_status_ = detail::pch_outcome(attempt, options_);
        }
    }
    log_ = std::move(attempt.log);
    if (attempt.status != NVRTC_SUCCESS) {
        // Compilation errors and rejected options both come with a log naming the problem; add
        // the status so an empty log still says what failed.
        std::string log = log_;
        if (!log.empty() && log.back() != '\n') log += '\n';
        const char* status_name = detail::nvrtc().nvrtcGetErrorString(attempt.status);
        log += std::string("nvrtcCompileProgram failed: ") + (status_name ? status_name : "error");
        throw CompileError(options_.name, std::move(log), used_flags, "NVRTC");
    }
    return ObjectCode::from_bytes(target, std::move(attempt.code), options_.name,
                                  std::move(attempt.symbols));
}

const char* to_string(PchOutcome outcome) noexcept {
    switch (outcome) {
        case PchOutcome::not_attempted: return "not_attempted";
        case PchOutcome::created: return "created";
        case PchOutcome::used: return "used";
        case PchOutcome::failed: return "failed";
    }
    return "unknown";
}

ObjectCode Program::compile_nvvm_program(CodeType target,
                                         const std::vector<std::string>& name_expressions) {
    if (!name_expressions.empty()) {
        throw InvalidArgumentError(describe(options_) +
                                   ": name expressions need a C++ program; an NVVM IR program's "
                                   "kernels are reached by their IR names");
    }
    // cubin: NVVM makes PTX, nvJitLink (or the driver) assembles it for the real arch.
    const CodeType nvvm_target = target == CodeType::cubin ? CodeType::ptx : target;
    const std::vector<std::string> flags = nvvm_flags(options_, nvvm_target == CodeType::ltoir);
    detail::NvvmOutput out = detail::compile_nvvm(source_, options_, flags);
    log_ = out.log;
    if (target != CodeType::cubin) {
        return ObjectCode::from_bytes(target, std::move(out.code), options_.name);
    }
    LinkerOptions link_options;
    link_options.name = options_.name;
    link_options.arch = resolve_arch(options_);
    Linker linker({ObjectCode::from_ptx(std::move(out.code), options_.name)}, link_options);
    try {
        ObjectCode linked = linker.link(CodeType::cubin);
        if (!linker.info_log().empty()) log_ += (log_.empty() ? "" : "\n") + linker.info_log();
        return ObjectCode::from_cubin(std::string(linked.code()), options_.name);
    } catch (const LinkError& e) {
        throw CompileError(options_.name, e.log(), e.options(), "NVVM + " + linker.backend());
    }
}

}  // namespace cudacore
