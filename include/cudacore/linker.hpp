/// @file
/// Linker: nvJitLink (or the driver's linker, cuLink*) over inputs of any code type, producing a
/// cubin or PTX ObjectCode. nvJitLink needs no GPU. One Linker links once; make a new one per link.
#pragma once

#include "cudacore/compile_errors.hpp"
#include "cudacore/linker_options.hpp"
#include "cudacore/object_code.hpp"

#include <cuda.h>
#include <nvJitLink.h>

#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace cudacore {

/// No link yet, an nvJitLink handle, or a driver link state.
using LinkerHandle = std::variant<std::monostate, nvJitLinkHandle, CUlinkState>;

/// Links ObjectCodes into one (nvJitLink, or the driver's linker).
class Linker {
public:
    /// Throws InvalidArgumentError when `inputs` is empty, or when an input's container
    /// structure (ELF tables, fatbin entries, archive members, LTO-IR header) is malformed; the
    /// message names the input (index and name) and what is wrong. Checked here because
    /// nvJitLink and the driver's linker crash on some malformed inputs instead of failing.
    Linker(std::vector<ObjectCode> inputs, LinkerOptions options = {});

    /// Links to `target` (cubin or ptx). The linked code's symbol map holds every input's name
    /// expressions (ObjectCode::symbol_map), so get_kernel("scale<float>") finds in it what it
    /// found in the compiled input; a name expression two inputs map to different lowered names
    /// is left out. Throws LinkError with the full error log on failure (for
    /// a verbose link, LinkerOptions::verbose or ptxas's -v, the info log too), and info_log() /
    /// error_log() hold the backend's logs after success and failure alike;
    /// CompilerApiError when nvJitLink rejects the flags, or when an isolated link's worker cannot
    /// be started for want of descriptors or processes (call() the system call, status() errno,
    /// what() the limit: RLIMIT_NOFILE, RLIMIT_NPROC); LoaderError when neither nvJitLink nor a
    /// driver can be loaded, or an isolated link's worker program is not there. The driver fallback uses the current device's primary context.
    ObjectCode link(CodeType target = CodeType::cubin);

    /// The inputs, in the order given. Never throws.
    const std::vector<ObjectCode>& inputs() const noexcept { return inputs_; }
    /// The options given to the constructor. Never throws.
    const LinkerOptions& options() const noexcept { return options_; }
    /// The exact flags passed to the backend: nvJitLink flags for a cubin link (link(ptx) adds
    /// -ptx), or the driver's CU_JIT options as NAME=VALUE. Resolves arch from the current device
    /// when unset; throws InvalidArgumentError for options the backend cannot honour.
    std::vector<std::string> flags() const;
    /// The backend's information log of the last link() (empty before one). Never throws.
    const std::string& info_log() const noexcept { return info_log_; }
    /// The backend's error log of the last link() (empty before one, or after a clean link).
    const std::string& error_log() const noexcept { return error_log_; }
    /// "nvJitLink" or "driver" (cuLink*: chosen by LinkerOptions::backend, or used when
    /// nvJitLink cannot be loaded).
    const std::string& backend() const noexcept { return backend_; }
    /// The same as a LinkerBackend (never automatic).
    LinkerBackend backend_kind() const noexcept;
    /// The backend a Linker with LinkerBackend::automatic would use, without making one:
    /// nvjitlink when nvJitLink loads, else driver when a driver is present, else nvjitlink (its
    /// link() then throws nvJitLink's LoaderError). Loads the libraries on first call; never throws.
    static LinkerBackend which_backend() noexcept;
    /// The link state (nvJitLinkHandle or CUlinkState) of the last link() of this Linker or a copy,
    /// alive until the next link(), close() or the last copy goes; monostate before any. Never
    /// destroy it yourself. Never throws.
    LinkerHandle handle() const noexcept;

    /// Ends the linker for every copy: destroys the last link's state; link() and flags() then
    /// throw InvalidArgumentError naming the call and the linker. This object lets go of its
    /// inputs. Never throws; not to race with other calls on a copy.
    void close() noexcept;
    /// Whether close() was called on this object or a copy. Never throws.
    bool is_closed() const noexcept;
    /// Drops this object's share and inputs, leaving it empty (as moved from). Never throws.
    void reset() noexcept;

private:
    ObjectCode link_with_nvjitlink(CodeType target);
    ObjectCode link_with_driver();

    std::vector<ObjectCode> inputs_;
    LinkerOptions options_;
    std::string info_log_;
    std::string error_log_;
    std::string backend_;
    struct State;   // the last link's state, kept so that handle() stays valid
    struct Shared;  // what the copies share: closed or not, the last link's State
    std::shared_ptr<Shared> shared_;
    // InvalidArgumentError naming `operation` when closed.
    void check_open(const char* operation) const;
};

}  // namespace cudacore
