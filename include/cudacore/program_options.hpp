/// @file
/// ProgramOptions: every NVRTC option cuda.core's ProgramOptions exposes, as a plain struct with
/// defaults; unset fields pass no flag. Then what they become: the target arch, the flags NVRTC
/// and libNVVM are given, the nvJitLink options of a PTX program; the one place fields turn into
/// flags, so a compile, its cache key and Program::flags() agree. These calls are pure and
/// thread-safe; options without a flag are refused with InvalidArgumentError naming the field.
#pragma once

#include "cudacore/header_bundle.hpp"
#include "cudacore/linker_options.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace cudacore {

/// An extra NVVM IR module (text or bitcode) linked with the program's own by libNVVM.
struct NamedSource {
    std::string name{};  ///< the module's name in libNVVM's messages
    std::string code{};  ///< NVVM IR text or bitcode
    /// Equal when every field is.
    bool operator==(const NamedSource&) const = default;
};

/// A macro for define_macro: -D<name> or -D<name>=\<value\>.
struct MacroDefinition {
    std::string name{};                  ///< the macro's name
    std::optional<std::string> value{};  ///< its value; none gives -D\<name\> (defined as 1)
    /// Equal when every field is.
    bool operator==(const MacroDefinition&) const = default;
};

/// The compiler options of a Program (unset fields pass no flag).
struct ProgramOptions {
    /// Name of the program, used in logs and error messages.
    std::string name = "default_program";
    /// Target architecture, "sm_90", "compute_90" (or "90"). Unset: the current device's.
    std::optional<std::string> arch{};

    std::optional<bool> relocatable_device_code{};     ///< --relocatable-device-code=true|false
    std::optional<bool> extensible_whole_program{};    ///< --extensible-whole-program
    std::optional<bool> debug{};                       ///< --device-debug
    std::optional<bool> lineinfo{};                    ///< --generate-line-info
    std::optional<bool> device_code_optimize{};        ///< --dopt=on|off
    std::vector<std::string> ptxas_options{};          ///< --ptxas-options=\<each\>
    std::optional<int> max_register_count{};           ///< --maxrregcount=N
    std::optional<bool> ftz{};                         ///< --ftz=true|false
    std::optional<bool> prec_sqrt{};                   ///< --prec-sqrt=true|false
    std::optional<bool> prec_div{};                    ///< --prec-div=true|false
    std::optional<bool> fma{};                         ///< --fmad=true|false
    std::optional<bool> use_fast_math{};               ///< --use_fast_math
    std::optional<bool> extra_device_vectorization{};  ///< --extra-device-vectorization
    std::optional<bool> link_time_optimization{};      ///< -dlto (implied by the ltoir target)
    std::optional<bool> gen_opt_lto{};                 ///< --gen-opt-lto

    std::vector<MacroDefinition> define_macro{};    ///< -D
    std::vector<std::string> undefine_macro{};      ///< -U
    std::vector<std::string> include_path{};        ///< -I, searched before the toolkit's
    /// Put the toolkit's include dir and its CCCL headers on the include path (not with bundles).
    bool toolkit_include_path = true;
    /// Let NVRTC find the C++ standard headers nvcc code includes (C++ only; docs/compiling.md).
    bool std_headers = false;
    /// Headers carried by the program (docs/design/header-bundles.md); C++ only.
    std::vector<HeaderBundle> header_bundles{};
    std::vector<std::string> pre_include{};         ///< --pre-include=\<header\>
    std::optional<bool> no_source_include{};        ///< --no-source-include
    std::optional<std::string> std{};               ///< --std=c++17 (cuda.core: std)
    std::optional<bool> builtin_move_forward{};     ///< --builtin-move-forward=true|false
    std::optional<bool> builtin_initializer_list{}; ///< --builtin-initializer-list=true|false
    std::optional<bool> disable_warnings{};         ///< --disable-warnings
    std::optional<bool> restrict{};                 ///< --restrict
    /// --device-as-default-execution-space (unset, as in NVRTC).
    std::optional<bool> device_as_default_execution_space{};
    std::optional<bool> device_int128{};            ///< --device-int128
    std::optional<bool> device_float128{};          ///< --device-float128
    std::optional<std::string> optimization_info{}; ///< --optimization-info=\<kind\> ("inline")
    std::optional<bool> no_display_error_number{};  ///< --no-display-error-number
    std::vector<int> diag_error{};                  ///< --diag-error=\<number\>
    std::vector<int> diag_suppress{};               ///< --diag-suppress=\<number\>
    std::vector<int> diag_warn{};                   ///< --diag-warn=\<number\>
    std::optional<bool> brief_diagnostics{};        ///< --brief-diagnostics=true|false
    std::optional<std::string> time{};              ///< --time=\<csv file\> ("-" for stdout)
    std::optional<int> split_compile{};             ///< --split-compile=N (0: all cores)
    std::optional<bool> fdevice_syntax_only{};      ///< --fdevice-syntax-only
    std::optional<bool> minimal{};                  ///< --minimal
    /// Leave unused module-scope __device__/__constant__ variables out of a C++ program's PTX
    /// (jitify's -remove-unused-globals; ptx target only, else InvalidArgumentError; relocatable
    /// code and code with debug information keep every variable). Passes no flag; enters the
    /// cache key.
    bool remove_unused_globals = false;
    /// --no-cache. Unset: on when ptxas_options asks for ptxas's report (-v, --verbose).
    std::optional<bool> no_cache{};
    /// --fdevice-time-trace=\<name\>: the compile's time trace goes to \<name\>.json (replaced).
    std::optional<std::string> fdevice_time_trace{};
    std::optional<std::string> frandom_seed{};        ///< --frandom-seed=\<seed\>
    std::optional<std::string> ofast_compile{};       ///< --Ofast-compile=max|mid|min|0
    /// --pch: NVRTC's automatic PCH; unset: on for C++ (unless create_pch or use_pch).
    std::optional<bool> pch{};
    std::optional<std::string> create_pch{};        ///< --create-pch=\<file\>
    std::optional<std::string> use_pch{};           ///< --use-pch=\<file\>
    std::optional<std::string> pch_dir{};           ///< --pch-dir=\<dir\>
    /// --pch-verbose=true|false (unset with automatic PCH: false).
    std::optional<bool> pch_verbose{};
    std::optional<bool> pch_messages{};             ///< --pch-messages=true|false
    std::optional<bool> instantiate_templates_in_pch{};  ///< --instantiate-templates-in-pch
    /// NVRTC's PCH heap size in bytes (process-wide, the last compile wins); unset: NVRTC's.
    std::optional<std::size_t> pch_heap_size{};

    /// Passed to the backend as they are, after every flag above.
    std::vector<std::string> extra_flags{};

    /// Where debug sources are written. Unset: $CUDACORE_DEBUG_SOURCE_DIR, else in $TMPDIR.
    std::optional<std::string> debug_source_dir{};

    /// NVVM IR programs only: more IR modules that libNVVM links with the program's own, in order.
    std::vector<NamedSource> extra_sources{};
    std::optional<bool> use_libdevice{};  ///< link libdevice (NVVM IR only); unset means no

    /// Assemble PTX (and NVVM IR to cubin) in a worker process (LinkerOptions::isolated).
    bool isolated_link = false;

    /// Equal when every field is.
    bool operator==(const ProgramOptions&) const = default;
};

// What the options become.
/// The arch with "sm_" added to a bare number ("90" -> "sm_90"); InvalidArgumentError for others.
std::string normalize_arch(const std::string& arch);
/// The current device's arch ("sm_90"); InvalidArgumentError without a driver or device.
std::string current_device_arch(const char* what_needs_it);

/// The target the last -arch among `flags` names ("-arch=X", "--gpu-architecture=X", or either
/// followed by X as the next flag), as NVRTC and nvJitLink read them; nullopt when none. Thread-safe.
std::optional<std::string> arch_in_flags(const std::vector<std::string>& flags);

/// `options.arch` normalised; when unset, the -arch among `extra_flags` (as jitify and NVRTC take
/// it), else the current device's arch. Throws InvalidArgumentError for an invalid arch, and where
/// `arch` and an -arch among `extra_flags` name different targets (NVRTC would take the last).
std::string resolve_arch(const ProgramOptions& options);

/// The NVRTC flags for `options`, in a fixed order; `lto` adds -dlto.
std::vector<std::string> nvrtc_flags(const ProgramOptions& options, bool lto = false);

/// Whether compiling `options` uses NVRTC's automatic PCH by its flags (false with
/// header_bundles, whose compiles add it themselves).
bool uses_automatic_pch(const ProgramOptions& options);

/// The toolkit include directories toolkit_include_path adds (those that exist).
std::vector<std::string> toolkit_include_dirs();

/// The libNVVM flags for an NVVM IR program, in NVVM's spelling and a fixed order; `lto` adds
/// -gen-lto.
std::vector<std::string> nvvm_flags(const ProgramOptions& options, bool lto = false);

/// The LinkerOptions that compile a PTX program the way `options` asks.
LinkerOptions to_linker_options(const ProgramOptions& options);

}  // namespace cudacore
