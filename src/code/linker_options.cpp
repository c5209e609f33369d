#include "cudacore/linker_options.hpp"

#include "cudacore/program_options.hpp"
#include "code/ptxas_report.hpp"

namespace cudacore {

std::string_view to_string(LinkerBackend backend) noexcept {
    switch (backend) {
        case LinkerBackend::automatic: return "automatic";
        case LinkerBackend::nvjitlink: return "nvJitLink";
        case LinkerBackend::driver: return "driver";
    }
    return "unknown";
}

std::string resolve_arch(const LinkerOptions& options) {
    if (options.arch) return normalize_arch(*options.arch);
    if (const std::optional<std::string> given = arch_in_flags(options.extra_flags)) return normalize_arch(*given);
    return current_device_arch(("linker '" + options.name + "'").c_str());
}

std::vector<std::string> nvjitlink_flags(const LinkerOptions& o, bool ptx_target) {
    std::vector<std::string> f;
    auto add_bool = [&](const std::optional<bool>& field, const char* flag) {
        if (field.value_or(false)) f.emplace_back(flag);
    };
    // nvJitLink's -ftz, -prec-div, -prec-sqrt and -fma take <n>: 1 or 0. With -lto they reach
    // NVVM, which refuses "true" and "false" (NVVM_ERROR_INVALID_OPTION); ptxas takes both.
    auto add_one_zero = [&](const std::optional<bool>& field, const char* flag) {
        if (field) f.push_back(std::string(flag) + "=" + (*field ? "1" : "0"));
    };
    auto add_int = [&](const std::optional<int>& field, const char* flag) {
        if (field) f.push_back(std::string(flag) + "=" + std::to_string(*field));
    };

    // An -arch among the extra flags is the target when `arch` is unset: nvJitLink reads it there.
    if (o.arch || !arch_in_flags(o.extra_flags)) f.push_back("-arch=" + resolve_arch(o));
    add_int(o.max_register_count, "-maxrregcount");
    add_bool(o.time, "-time");
    add_bool(o.verbose, "-verbose");
    // PTX output is made by link-time optimization only: implied unless set to false.
    if (o.link_time_optimization.value_or(ptx_target)) f.emplace_back("-lto");
    if (o.ptx.value_or(ptx_target)) f.emplace_back("-ptx");
    if (o.optimization_level) f.push_back("-O" + std::to_string(*o.optimization_level));
    add_bool(o.debug, "-g");
    add_bool(o.lineinfo, "-lineinfo");
    add_one_zero(o.ftz, "-ftz");
    add_one_zero(o.prec_div, "-prec-div");
    add_one_zero(o.prec_sqrt, "-prec-sqrt");
    add_one_zero(o.fma, "-fma");
    for (const auto& name : o.kernels_used) f.push_back("-kernels-used=" + name);
    for (const auto& name : o.variables_used) f.push_back("-variables-used=" + name);
    add_bool(o.optimize_unused_variables, "-optimize-unused-variables");
    for (const auto& option : o.ptxas_options) f.push_back("-Xptxas=" + option);
    add_int(o.split_compile, "-split-compile");
    add_int(o.split_compile_extended, "-split-compile-extended");
    // ptxas -v reports only when ptxas runs (code/ptxas_report.hpp).
    if (o.no_cache.value_or(detail::asks_ptxas_report(o.ptxas_options)))
        f.emplace_back("-no-cache");
    f.insert(f.end(), o.extra_flags.begin(), o.extra_flags.end());
    return f;
}

}  // namespace cudacore
