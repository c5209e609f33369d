/// @file
/// LinkerOptions: the options cuda.core's LinkerOptions exposes, as a plain struct with defaults.
///
/// Unset fields pass no flag. The fields turn into nvJitLink flags in exactly one place,
/// nvjitlink_flags() (Linker::flags() shows the result); the driver's linker (chosen by `backend`,
/// or as the fallback) maps the subset it understands to CU_JIT options and refuses the rest by
/// field name.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudacore {

/// Which linker a Linker uses. automatic: nvJitLink when it loads, else the driver's linker
/// (cuLink*) when a driver is present. nvjitlink / driver: that one, whatever else is present
/// (the driver's linker needs a driver and a current device at link time, produces cubin only,
/// takes no LTO-IR, and refuses by name the options only nvJitLink has).
enum class LinkerBackend { automatic, nvjitlink, driver };

/// "automatic", "nvJitLink", "driver".
std::string_view to_string(LinkerBackend backend) noexcept;

/// Options of a Linker: nvJitLink's flags, the backend, isolation.
struct LinkerOptions {
    /// Name of the link, used in logs and error messages.
    std::string name = "default_linker";
    /// Target architecture, "sm_90" (or "90"). Unset: the current device's arch; with no driver
    /// or device, Linker throws InvalidArgumentError asking to set it.
    std::optional<std::string> arch{};
    std::optional<int> max_register_count{};        ///< -maxrregcount=N
    std::optional<bool> time{};                     ///< -time (timings in the info log)
    std::optional<bool> verbose{};                  ///< -verbose
    std::optional<bool> link_time_optimization{};   ///< -lto (needed to link LTO-IR; unset: on
                                                    ///< for PTX output)
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
    /// -no-cache. Unset: on when ptxas_options asks for ptxas's report (-v, --verbose), which
    /// a link served from nvJitLink's cache would leave out of info_log().
    std::optional<bool> no_cache{};

    /// Passed to nvJitLink as they are, after every flag above.
    std::vector<std::string> extra_flags{};

    /// The linker to use (see LinkerBackend). Passes no flag.
    LinkerBackend backend = LinkerBackend::automatic;

    /// Link in a child process (cudacore-link-worker), for code this program did not produce: an
    /// nvJitLink crash ends the worker, and link() throws LinkError naming the input and signal;
    /// errors nvJitLink only prints fail the link too. Costs milliseconds. nvJitLink only;
    /// handle() stays empty (docs/compiling.md).
    bool isolated = false;
    /// The worker program. Empty: $CUDACORE_LINK_WORKER when set, else cudacore-link-worker
    /// beside the library (a build tree) or in ../libexec/cudacore/ from it (an installation).
    std::string worker_program{};
    /// An isolated link still running after this long is killed, and link() throws LinkError
    /// saying so. Zero: no limit.
    std::chrono::milliseconds isolated_timeout{0};

    /// Equal when every field is.
    bool operator==(const LinkerOptions&) const = default;
};

/// The arch (normalised, "sm_90") or the current device's arch when unset; throws
/// InvalidArgumentError saying to set arch when there is no device.
std::string resolve_arch(const LinkerOptions& options);

/// The nvJitLink flags for `options` in a fixed order (the one place fields become flags).
/// `ptx_target` adds -ptx when ptx is not already set, and -lto when link_time_optimization is
/// unset (nvJitLink makes PTX only from LTO-IR, by link-time optimization).
std::vector<std::string> nvjitlink_flags(const LinkerOptions& options, bool ptx_target = false);

}  // namespace cudacore
