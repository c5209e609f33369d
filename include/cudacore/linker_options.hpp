/// @file
/// LinkerOptions: the options cuda.core's LinkerOptions exposes, as a plain struct with defaults;
/// unset fields pass no flag. Linker::flags() shows the flags they become.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudacore {

/// Which linker a Linker uses. automatic: nvJitLink when it loads, else the driver's (cuLink*:
/// cubin only, no LTO-IR, refuses nvJitLink-only options by name).
enum class LinkerBackend { automatic, nvjitlink, driver };

/// "automatic", "nvJitLink", "driver".
std::string_view to_string(LinkerBackend backend) noexcept;

/// Options of a Linker: nvJitLink's flags, the backend, isolation.
struct LinkerOptions {
    /// Name of the link, used in logs and error messages.
    std::string name = "default_linker";
    /// Target architecture, "sm_90" (or "90"). Unset: the current device's.
    std::optional<std::string> arch{};
    std::optional<int> max_register_count{};        ///< -maxrregcount=N
    std::optional<bool> time{};                     ///< -time (timings in the info log)
    std::optional<bool> verbose{};                  ///< -verbose
    std::optional<bool> link_time_optimization{};   ///< -lto (unset: on for PTX output)
    std::optional<bool> ptx{};                        ///< -ptx (implied by the ptx target)
    std::optional<int> optimization_level{};          ///< -O0 .. -O4
    std::optional<bool> debug{};                      ///< -g
    std::optional<bool> lineinfo{};                   ///< -lineinfo
    std::optional<bool> ftz{};                        ///< -ftz=1|0
    std::optional<bool> prec_div{};                   ///< -prec-div=1|0
    std::optional<bool> prec_sqrt{};                  ///< -prec-sqrt=1|0
    std::optional<bool> fma{};                        ///< -fma=1|0
    std::vector<std::string> kernels_used{};          ///< -kernels-used=\<name\>
    std::vector<std::string> variables_used{};        ///< -variables-used=\<name\>
    std::optional<bool> optimize_unused_variables{};  ///< -optimize-unused-variables
    std::vector<std::string> ptxas_options{};         ///< -Xptxas=\<each\>
    std::optional<int> split_compile{};               ///< -split-compile=N
    std::optional<int> split_compile_extended{};      ///< -split-compile-extended=N
    /// -no-cache. Unset: on when ptxas_options asks for ptxas's report (-v, --verbose).
    std::optional<bool> no_cache{};

    /// Passed to nvJitLink as they are, after every flag above.
    std::vector<std::string> extra_flags{};

    /// The linker to use. Passes no flag.
    LinkerBackend backend = LinkerBackend::automatic;

    /// Link in a worker process: an nvJitLink crash becomes LinkError (nvJitLink only).
    bool isolated = false;
    /// The worker program; empty: $CUDACORE_LINK_WORKER, else beside or under the library.
    std::string worker_program{};
    /// An isolated link running longer is killed (LinkError). Zero: no limit.
    std::chrono::milliseconds isolated_timeout{0};

    /// Equal when every field is.
    bool operator==(const LinkerOptions&) const = default;
};

/// The arch (normalised, "sm_90"); when unset, the -arch among `extra_flags`, else the current
/// device's; InvalidArgumentError without one.
std::string resolve_arch(const LinkerOptions& options);

/// The nvJitLink flags for `options` in a fixed order; `ptx_target` adds -ptx (and -lto).
std::vector<std::string> nvjitlink_flags(const LinkerOptions& options, bool ptx_target = false);

}  // namespace cudacore
