/// @file
/// ProgramOptions: every NVRTC option cuda.core's ProgramOptions exposes, as a plain struct with
/// defaults. Unset fields pass no flag; the fields become flags in one place, nvrtc_flags()
/// (compiler_flags.hpp), and Program::flags(target) shows the result.
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
    /// Target architecture, "sm_90", "sm_90a", "compute_90" (or "90", read as "sm_90"). Unset:
    /// the current device's arch; with no driver or device the flags throw InvalidArgumentError
    /// asking to set it.
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
    /// Put the toolkit's include dir and its CCCL headers on the include path ($CUDA_HOME/include,
    /// else the build's toolkit, else /usr/local/cuda/include). Ignored with header_bundles.
    bool toolkit_include_path = true;
    /// Let NVRTC find the C++ standard headers nvcc code includes (standard_headers.hpp), searched
    /// after every other include folder. C++ only. Off by default (docs/compiling.md).
    bool std_headers = false;
    /// Headers carried by the program instead of a toolkit on disk (HeaderBundle); C++ only. A
    /// bundled name is read from the bundle (the first that holds it) before any folder; the
    /// toolkit's folders are not searched. Bundles are read from their folders with automatic PCH
    /// where possible, else from memory without PCH (a pch_off warning); pch = true, create_pch
    /// and use_pch are refused. Keyed by each bundle's digest (docs/design/header-bundles.md).
    std::vector<HeaderBundle> header_bundles{};
    std::vector<std::string> pre_include{};         ///< --pre-include=\<header\>
    std::optional<bool> no_source_include{};        ///< --no-source-include
    std::optional<std::string> std{};               ///< --std=c++17 (cuda.core: std)
    std::optional<bool> builtin_move_forward{};     ///< --builtin-move-forward=true|false
    std::optional<bool> builtin_initializer_list{}; ///< --builtin-initializer-list=true|false
    std::optional<bool> disable_warnings{};         ///< --disable-warnings
    std::optional<bool> restrict{};                 ///< --restrict
    /// --device-as-default-execution-space: functions without __host__ or __device__ are device
    /// ones. Unset, as in NVRTC; NVRTC's "not allowed in JIT mode" error hints at it.
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
    /// What jitify's -remove-unused-globals gives (NVRTC 13.0 has no flag for it: --minimal,
    /// --extensible-whole-program and -Xnvvm options all keep them): the PTX of a C++ program
    /// leaves out the module-scope __device__ and __constant__ variables that nothing in it uses
    /// (no instruction, no kept variable's initializer, no name expression), so a module made
    /// from it allocates none of them. C++ programs compiled to ptx only (other targets and
    /// source types throw InvalidArgumentError); relocatable code keeps them all (other modules
    /// may use them). Passes no flag; enters the cache key.
    bool remove_unused_globals = false;
    /// --no-cache. Unset: on when ptxas_options asks for ptxas's report (-v, --verbose), which
    /// a compile served from NVRTC's cache would leave out of the log.
    std::optional<bool> no_cache{};
    /// --fdevice-time-trace=\<name\>: NVRTC writes the compile's time trace (Chrome's JSON) to
    /// \<name\>.json, ".json" appended; a file of that name from an earlier compile is replaced.
    std::optional<std::string> fdevice_time_trace{};
    std::optional<std::string> frandom_seed{};        ///< --frandom-seed=\<seed\>
    std::optional<std::string> ofast_compile{};       ///< --Ofast-compile=max|mid|min|0
    /// --pch: NVRTC's automatic precompiled headers. Unset: on for C++ programs (unless create_pch
    /// or use_pch); false turns it off. PCH never fails a compile (Program::pch_status()).
    std::optional<bool> pch{};
    std::optional<std::string> create_pch{};        ///< --create-pch=\<file\>
    std::optional<std::string> use_pch{};           ///< --use-pch=\<file\>
    std::optional<std::string> pch_dir{};           ///< --pch-dir=\<dir\>
    /// --pch-verbose=true|false. Unset with automatic PCH: false, so the log does not list every
    /// earlier PCH that did not match.
    std::optional<bool> pch_verbose{};
    std::optional<bool> pch_messages{};             ///< --pch-messages=true|false
    /// --instantiate-templates-in-pch=true|false
    std::optional<bool> instantiate_templates_in_pch{};
    /// NVRTC's PCH heap size in bytes (nvrtcSetPCHHeapSize; process-wide, the last compile wins).
    /// Unset: NVRTC's size, grown when too small for a PCH.
    std::optional<std::size_t> pch_heap_size{};

    /// Passed to the backend as they are, after every flag above.
    std::vector<std::string> extra_flags{};

    /// Where the source of a C++ program compiled with debug or line information is written for
    /// debuggers (`<folder>/<XXH3-128 of the source>/<name>`, never deleted). Unset:
    /// $CUDACORE_DEBUG_SOURCE_DIR, else `<$TMPDIR or /tmp>/cudacore-jit-sources-<uid>`
    /// (docs/compiling.md).
    std::optional<std::string> debug_source_dir{};

    /// NVVM IR programs only (refused for C++ and PTX): more IR modules that libNVVM links with
    /// the program's own, in order; and libdevice (the math library, libdevice.10.bc beside
    /// libNVVM) added lazily, so only the functions the program calls are linked in.
    std::vector<NamedSource> extra_sources{};
    std::optional<bool> use_libdevice{};  ///< link libdevice (NVVM IR only); unset means no

    /// PTX programs (and NVVM IR compiled to cubin) are assembled by nvJitLink in a worker
    /// process: see LinkerOptions::isolated. For PTX this program did not produce. Passes no flag.
    bool isolated_link = false;

    /// Equal when every field is.
    bool operator==(const ProgramOptions&) const = default;
};

}  // namespace cudacore
