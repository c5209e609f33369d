/// @file
/// Linker: nvJitLink (or the driver's linker, cuLink*) over inputs of any code type, producing a
/// cubin or PTX ObjectCode. nvJitLink needs no GPU. Each link() links the inputs afresh (a Linker
/// may link again, to another target); the logs are the last link's.
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

/// Links ObjectCodes into one (nvJitLink, or the driver's linker). After close(), link() and
/// flags() throw InvalidArgumentError naming the call; one Linker is not used from two threads.
class Linker {
public:
    /// InvalidArgumentError naming the input when `inputs` is empty or an input is malformed.
    Linker(std::vector<ObjectCode> inputs, LinkerOptions options = {});

    /// Links to `target` (cubin or ptx); the symbol map merges the inputs' (conflicts left out).
    /// Throws LinkError with the log, CompilerApiError (flags refused, an isolated worker not
    /// started: call() and errno), LoaderError (no linker). info_log()/error_log() hold the logs.
    ObjectCode link(CodeType target = CodeType::cubin);

    /// The inputs, in the order given.
    const std::vector<ObjectCode>& inputs() const noexcept { return inputs_; }
    /// The options given to the constructor.
    const LinkerOptions& options() const noexcept { return options_; }
    /// The flags passed to the backend for a cubin link; a link to PTX adds `-lto` and `-ptx`
    /// where link_time_optimization and ptx are unset. InvalidArgumentError for options it cannot
    /// honour.
    std::vector<std::string> flags() const;
    /// The backend's information log of the last link() (empty before one).
    const std::string& info_log() const noexcept { return info_log_; }
    /// The backend's error log of the last link() (empty before one, or after a clean link).
    const std::string& error_log() const noexcept { return error_log_; }
    /// "nvJitLink" or "driver".
    const std::string& backend() const noexcept { return backend_; }
    /// The same as a LinkerBackend (never automatic).
    LinkerBackend backend_kind() const noexcept;
    /// The backend LinkerBackend::automatic would use (loads the libraries on first call).
    static LinkerBackend which_backend() noexcept;
    /// The link state of the last link() of this Linker or a copy; never destroy it yourself.
    LinkerHandle handle() const noexcept;

    /// Ends the linker for every copy (its link state too); this object lets go of its inputs.
    void close() noexcept;
    /// Whether close() was called on this object or a copy.
    bool is_closed() const noexcept;
    /// Drops this object's share and inputs, leaving it empty (as moved from).
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
    void check_open(const char* operation) const;
};

}  // namespace cudacore
