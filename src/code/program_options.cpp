#include "cudacore/program_options.hpp"

#include "cudacore/errors.hpp"
#include "code/cuda_home.hpp"
#include "code/ptxas_report.hpp"
#include "headers/standard_headers.hpp"
#include "loader/driver_api.hpp"

#include <cctype>
#include <filesystem>
#include <map>
#include <mutex>
#include <string_view>

#ifndef CUDACORE_DEFAULT_CUDA_HOME
#define CUDACORE_DEFAULT_CUDA_HOME ""
#endif

namespace cudacore {

namespace {

const char* true_false(bool value) { return value ? "true" : "false"; }

// "90", "90a", "100f": two or three digits and an optional family suffix. (A plain scan: this
// runs on every flags() call, which cache keys make a hot path; std::regex costs microseconds.)
bool is_arch_number(std::string_view text) {
    if (!text.empty() && (text.back() == 'a' || text.back() == 'f')) text.remove_suffix(1);
    if (text.size() < 2 || text.size() > 3) return false;
    for (char c : text)
        if (c < '0' || c > '9') return false;
    return true;
}

}  // namespace

std::string normalize_arch(const std::string& arch) {
    if (is_arch_number(arch)) return "sm_" + arch;
    for (std::string_view prefix : {"sm_", "compute_", "lto_"}) {
        if (arch.starts_with(prefix) && is_arch_number(std::string_view(arch).substr(prefix.size())))
            return arch;
    }
    throw InvalidArgumentError("invalid arch '" + arch +
                               "': expected sm_NN, sm_NNa, compute_NN or a bare number such as 90");
}

std::optional<std::string> arch_in_flags(const std::vector<std::string>& flags) {
    std::optional<std::string> found;
    for (std::size_t i = 0; i < flags.size(); ++i) {
        for (std::string_view name : {"-arch", "--gpu-architecture"}) {
            const std::string& flag = flags[i];
            if (flag == name && i + 1 < flags.size()) found = flags[i + 1];
            else if (flag.size() > name.size() && flag.starts_with(name) && flag[name.size()] == '=')
                found = flag.substr(name.size() + 1);
        }
    }
    return found;
}

std::string resolve_arch(const ProgramOptions& options) {
    const std::optional<std::string> given = arch_in_flags(options.extra_flags);
    if (options.arch) {
        std::string arch = normalize_arch(*options.arch);
        // NVRTC compiles for the last -arch it is given, the extra flags' (they come after).
        if (given && normalize_arch(*given) != arch) {
            throw InvalidArgumentError("program '" + options.name + "': arch is '" + arch +
                                       "' but its extra_flags ask for '" + *given +
                                       "' (NVRTC would compile for the last one given): set only one");
        }
        return arch;
    }
    if (given) return normalize_arch(*given);
    return current_device_arch(("program '" + options.name + "'").c_str());
}

namespace {
std::vector<std::string> find_toolkit_include_dirs(const std::string& cuda_home) {
    std::vector<std::filesystem::path> roots;
    if (!cuda_home.empty()) roots.emplace_back(cuda_home);
    if (*CUDACORE_DEFAULT_CUDA_HOME) roots.emplace_back(CUDACORE_DEFAULT_CUDA_HOME);
    roots.emplace_back("/usr/local/cuda");
    std::error_code ignored;
    for (const auto& root : roots) {
        const auto include = root / "include";
        if (!std::filesystem::exists(include / "cuda_runtime.h", ignored)) continue;
        std::vector<std::string> dirs{include.string()};
        // CCCL (<cuda/std/...>, cub, thrust) lives in <toolkit>/include/cccl in CUDA 13.
        if (std::filesystem::is_directory(include / "cccl", ignored))
            dirs.push_back((include / "cccl").string());
        return dirs;
    }
    return {};
}
}  // namespace

std::vector<std::string> toolkit_include_dirs() {
    // Looked up once per $CUDA_HOME value: flags() runs for every cache lookup.
    // Leaked on purpose: usable from static destructors.
    struct Found {
        std::mutex mutex;
        std::map<std::string, std::vector<std::string>> by_home;
    };
    static auto* found = new Found;
    const std::string* home = detail::cuda_home_value();
    const std::string key = home ? *home : std::string();
    std::lock_guard lock(found->mutex);
    auto it = found->by_home.find(key);
    if (it == found->by_home.end())
        it = found->by_home.emplace(key, find_toolkit_include_dirs(key)).first;
    return it->second;
}

bool uses_automatic_pch(const ProgramOptions& o) {
    // NVRTC's automatic PCH gave wrong code for programs whose headers come from memory.
    if (!o.header_bundles.empty()) return false;
    return o.pch.value_or(!o.create_pch && !o.use_pch);
}

// Long because: one line per ProgramOptions field, in the order NVRTC is given them; a flat list
// reads best whole.
std::vector<std::string> nvrtc_flags(const ProgramOptions& o, bool lto) {
    if (!o.header_bundles.empty() && (o.pch.value_or(false) || o.create_pch || o.use_pch)) {
        throw InvalidArgumentError("program '" + o.name + "': precompiled headers (" +
                                   std::string(o.pch.value_or(false) ? "pch" : o.create_pch ? "create_pch" : "use_pch") +
                                   ") cannot be used with header_bundles: NVRTC's PCH of "
                                   "in-memory headers is not reliable; leave pch unset or false");
    }
    std::vector<std::string> f;
    // Once per cache lookup of a new Program: room for the usual flags, so that few are moved.
    f.reserve(24 + o.include_path.size() + o.define_macro.size() + o.extra_flags.size());
    auto add_bool = [&](const std::optional<bool>& field, const char* flag) {
        if (field.value_or(false)) f.emplace_back(flag);
    };
    auto add_true_false = [&](const std::optional<bool>& field, const char* flag) {
        if (field) f.push_back(std::string(flag) + "=" + true_false(*field));
    };
    auto add_value = [&](const auto& field, const char* flag) {
        if (field) {
            if constexpr (std::is_same_v<std::decay_t<decltype(*field)>, std::string>)
                f.push_back(std::string(flag) + "=" + *field);
            else
                f.push_back(std::string(flag) + "=" + std::to_string(*field));
        }
    };

    // An -arch among the extra flags is the target when `arch` is unset: NVRTC reads it there.
    if (o.arch || !arch_in_flags(o.extra_flags)) f.push_back("-arch=" + resolve_arch(o));
    add_true_false(o.relocatable_device_code, "--relocatable-device-code");
    add_bool(o.extensible_whole_program, "--extensible-whole-program");
    add_bool(o.debug, "--device-debug");
    add_bool(o.lineinfo, "--generate-line-info");
    if (o.device_code_optimize) f.push_back(*o.device_code_optimize ? "--dopt=on" : "--dopt=off");
    for (const auto& option : o.ptxas_options) f.push_back("--ptxas-options=" + option);
    add_value(o.max_register_count, "--maxrregcount");
    add_true_false(o.ftz, "--ftz");
    add_true_false(o.prec_sqrt, "--prec-sqrt");
    add_true_false(o.prec_div, "--prec-div");
    add_true_false(o.fma, "--fmad");
    add_bool(o.use_fast_math, "--use_fast_math");
    add_bool(o.extra_device_vectorization, "--extra-device-vectorization");
    if (o.link_time_optimization.value_or(lto)) f.emplace_back("-dlto");
    add_bool(o.gen_opt_lto, "--gen-opt-lto");
    for (const auto& macro : o.define_macro)
        f.push_back("--define-macro=" + macro.name + (macro.value ? "=" + *macro.value : ""));
    for (const auto& name : o.undefine_macro) f.push_back("--undefine-macro=" + name);
    for (const auto& dir : o.include_path) f.push_back("--include-path=" + dir);
    if (o.toolkit_include_path && o.header_bundles.empty()) {
        for (const auto& dir : toolkit_include_dirs()) f.push_back("--include-path=" + dir);
    }
    // Last, so that any other folder's header of the same name wins.
    if (o.std_headers) {
        if (const std::string dir = detail::standard_headers_folder(); !dir.empty())
            f.push_back("--include-path=" + dir);
    }
    for (const auto& header : o.pre_include) f.push_back("--pre-include=" + header);
    add_bool(o.no_source_include, "--no-source-include");
    add_value(o.std, "--std");
    add_true_false(o.builtin_move_forward, "--builtin-move-forward");
    add_true_false(o.builtin_initializer_list, "--builtin-initializer-list");
    add_bool(o.disable_warnings, "--disable-warnings");
    add_bool(o.restrict, "--restrict");
    add_bool(o.device_as_default_execution_space, "--device-as-default-execution-space");
    add_bool(o.device_int128, "--device-int128");
    add_bool(o.device_float128, "--device-float128");
    add_value(o.optimization_info, "--optimization-info");
    add_bool(o.no_display_error_number, "--no-display-error-number");
    for (int number : o.diag_error) f.push_back("--diag-error=" + std::to_string(number));
    for (int number : o.diag_suppress) f.push_back("--diag-suppress=" + std::to_string(number));
    for (int number : o.diag_warn) f.push_back("--diag-warn=" + std::to_string(number));
    add_true_false(o.brief_diagnostics, "--brief-diagnostics");
    add_value(o.time, "--time");
    add_value(o.split_compile, "--split-compile");
    add_bool(o.fdevice_syntax_only, "--fdevice-syntax-only");
    add_bool(o.minimal, "--minimal");
    // ptxas -v reports only when ptxas runs (code/ptxas_report.hpp).
    if (o.no_cache.value_or(detail::asks_ptxas_report(o.ptxas_options)))
        f.emplace_back("--no-cache");
    add_value(o.fdevice_time_trace, "--fdevice-time-trace");
    add_value(o.frandom_seed, "--frandom-seed");
    add_value(o.ofast_compile, "--Ofast-compile");
    const bool automatic_pch = uses_automatic_pch(o);
    if (automatic_pch) f.emplace_back("--pch");
    add_value(o.create_pch, "--create-pch");
    add_value(o.use_pch, "--use-pch");
    add_value(o.pch_dir, "--pch-dir");
    if (o.pch_verbose)
        add_true_false(o.pch_verbose, "--pch-verbose");
    else if (automatic_pch)
        f.emplace_back("--pch-verbose=false");
    add_true_false(o.pch_messages, "--pch-messages");
    add_true_false(o.instantiate_templates_in_pch, "--instantiate-templates-in-pch");
    f.insert(f.end(), o.extra_flags.begin(), o.extra_flags.end());
    return f;
}

namespace {
// The fields of `o` set that libNVVM has no option for (one line per field of ProgramOptions
// that only NVRTC takes).
std::vector<std::string> fields_nvvm_lacks(const ProgramOptions& o) {
    std::vector<std::string> unsupported;
    auto refuse = [&](bool set, const char* field) {
        if (set) unsupported.emplace_back(field);
    };
    refuse(o.relocatable_device_code.has_value(), "relocatable_device_code");
    refuse(o.extensible_whole_program.has_value(), "extensible_whole_program");
    refuse(o.lineinfo.has_value(), "lineinfo (NVVM takes line info from the IR's debug metadata)");
    refuse(!o.ptxas_options.empty(), "ptxas_options");
    refuse(o.max_register_count.has_value(), "max_register_count");
    refuse(o.use_fast_math.has_value(), "use_fast_math");
    refuse(o.extra_device_vectorization.has_value(), "extra_device_vectorization");
    refuse(o.gen_opt_lto.has_value(), "gen_opt_lto");
    refuse(!o.define_macro.empty(), "define_macro");
    refuse(!o.undefine_macro.empty(), "undefine_macro");
    refuse(!o.include_path.empty(), "include_path");
    refuse(!o.pre_include.empty(), "pre_include");
    refuse(o.no_source_include.has_value(), "no_source_include");
    refuse(o.std.has_value(), "std");
    refuse(o.builtin_move_forward.has_value(), "builtin_move_forward");
    refuse(o.builtin_initializer_list.has_value(), "builtin_initializer_list");
    refuse(o.disable_warnings.has_value(), "disable_warnings");
    refuse(o.restrict.has_value(), "restrict");
    refuse(o.device_as_default_execution_space.has_value(), "device_as_default_execution_space");
    refuse(o.device_int128.has_value(), "device_int128");
    refuse(o.device_float128.has_value(), "device_float128");
    refuse(o.optimization_info.has_value(), "optimization_info");
    refuse(o.no_display_error_number.has_value(), "no_display_error_number");
    refuse(!o.diag_error.empty(), "diag_error");
    refuse(!o.diag_suppress.empty(), "diag_suppress");
    refuse(!o.diag_warn.empty(), "diag_warn");
    refuse(o.brief_diagnostics.has_value(), "brief_diagnostics");
    refuse(o.time.has_value(), "time");
    refuse(o.split_compile.has_value(), "split_compile");
    refuse(o.fdevice_syntax_only.has_value(), "fdevice_syntax_only");
    refuse(o.minimal.has_value(), "minimal");
    refuse(o.no_cache.has_value(), "no_cache");
    refuse(o.fdevice_time_trace.has_value(), "fdevice_time_trace");
    refuse(o.frandom_seed.has_value(), "frandom_seed");
    refuse(o.ofast_compile.has_value(), "ofast_compile");
    refuse(o.pch.value_or(false), "pch");
    refuse(o.create_pch.has_value(), "create_pch");
    refuse(o.use_pch.has_value(), "use_pch");
    refuse(o.pch_dir.has_value(), "pch_dir");
    refuse(o.pch_verbose.has_value(), "pch_verbose");
    refuse(o.pch_messages.has_value(), "pch_messages");
    refuse(o.instantiate_templates_in_pch.has_value(), "instantiate_templates_in_pch");
    refuse(!o.header_bundles.empty(), "header_bundles");
    return unsupported;
}
}  // namespace

std::vector<std::string> nvvm_flags(const ProgramOptions& o, bool lto) {
    if (const std::vector<std::string> unsupported = fields_nvvm_lacks(o); !unsupported.empty()) {
        std::string list;
        for (const auto& field : unsupported) list += (list.empty() ? "" : ", ") + field;
        throw InvalidArgumentError("program '" + o.name +
                                   "': libNVVM has no option for: " + list);
    }

    std::vector<std::string> flags;
    std::string arch = resolve_arch(o);  // sm_90a / compute_90a / sm_90
    if (arch.rfind("sm_", 0) == 0) arch = "compute_" + arch.substr(3);
    flags.push_back("-arch=" + arch);
    if (o.device_code_optimize) flags.push_back(*o.device_code_optimize ? "-opt=3" : "-opt=0");
    if (o.debug.value_or(false)) flags.emplace_back("-g");
    auto zero_one = [&](const std::optional<bool>& value, const char* flag) {
        if (value) flags.push_back(std::string(flag) + (*value ? "1" : "0"));
    };
    zero_one(o.ftz, "-ftz=");
    zero_one(o.prec_sqrt, "-prec-sqrt=");
    zero_one(o.prec_div, "-prec-div=");
    zero_one(o.fma, "-fma=");
    if (o.link_time_optimization.value_or(lto)) flags.emplace_back("-gen-lto");
    flags.insert(flags.end(), o.extra_flags.begin(), o.extra_flags.end());
    return flags;
}

LinkerOptions to_linker_options(const ProgramOptions& o) {
    // Options that only mean something to a C++ front end: refuse them rather than ignore them.
    std::vector<std::string> unsupported;
    auto refuse = [&](bool set, const char* field) {
        if (set) unsupported.emplace_back(field);
    };
    refuse(o.relocatable_device_code.value_or(false), "relocatable_device_code");
    refuse(o.extensible_whole_program.value_or(false), "extensible_whole_program");
    refuse(o.use_fast_math.has_value(), "use_fast_math");
    refuse(o.gen_opt_lto.has_value(), "gen_opt_lto");
    refuse(!o.define_macro.empty(), "define_macro");
    refuse(!o.undefine_macro.empty(), "undefine_macro");
    refuse(!o.include_path.empty(), "include_path");
    refuse(!o.pre_include.empty(), "pre_include");
    refuse(o.std.has_value(), "std");
    refuse(o.device_int128.has_value(), "device_int128");
    refuse(o.time.has_value() && *o.time != "-", "time (a file; nvJitLink logs times)");
    refuse(!o.header_bundles.empty(), "header_bundles");
    if (!unsupported.empty()) {
        std::string list;
        for (const auto& field : unsupported) list += (list.empty() ? "" : ", ") + field;
        throw InvalidArgumentError("program '" + o.name +
                                   "': these options do not apply to a PTX program: " + list);
    }
    LinkerOptions l;
    l.name = o.name;
    l.isolated = o.isolated_link;
    l.arch = o.arch;
    l.max_register_count = o.max_register_count;
    l.time = o.time ? std::optional<bool>(true) : std::nullopt;
    l.link_time_optimization = o.link_time_optimization;
    l.debug = o.debug;
    l.lineinfo = o.lineinfo;
    l.ftz = o.ftz;
    l.prec_div = o.prec_div;
    l.prec_sqrt = o.prec_sqrt;
    l.fma = o.fma;
    l.ptxas_options = o.ptxas_options;
    l.split_compile = o.split_compile;
    l.no_cache = o.no_cache;
    if (o.device_code_optimize) l.optimization_level = *o.device_code_optimize ? 3 : 0;
    l.extra_flags = o.extra_flags;
    return l;
}

}  // namespace cudacore
