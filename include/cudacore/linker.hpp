// Linker: nvJitLink over inputs of any code type, producing a cubin or PTX ObjectCode.
// Needs no GPU. One Linker links once; make a new one per link.
#pragma once

#include "cudacore/linker_options.hpp"
#include "cudacore/object_code.hpp"

#include <string>
#include <vector>

namespace cudacore {

class Linker {
public:
    // Throws InvalidArgumentError when `inputs` is empty, or when an input's container
    // structure (ELF tables, fatbin entries, archive members, LTO-IR header) is malformed; the
    // message names the input (index and name) and what is wrong. Checked here because
    // nvJitLink and the driver's linker crash on some malformed inputs instead of failing.
    Linker(std::vector<ObjectCode> inputs, LinkerOptions options = {});

    // Links to `target` (cubin or ptx). Throws LinkError with the full error log on failure (for
    // a verbose link, LinkerOptions::verbose or ptxas's -v, the info log too), and info_log() /
    // error_log() hold the backend's logs after success and failure alike;
    // CompilerApiError when nvJitLink rejects the flags, LoaderError when neither nvJitLink nor
    // a driver can be loaded. The driver fallback uses the current device's primary context.
    ObjectCode link(CodeType target = CodeType::cubin);

    const std::vector<ObjectCode>& inputs() const noexcept { return inputs_; }
    const LinkerOptions& options() const noexcept { return options_; }
    // The exact flags passed to the backend: nvJitLink flags for a cubin link (link(ptx) adds
    // -ptx), or the driver's CU_JIT options as NAME=VALUE. Resolves arch from the current device
    // when unset; throws InvalidArgumentError for options the backend cannot honour.
    std::vector<std::string> flags() const;
    const std::string& info_log() const noexcept { return info_log_; }
    const std::string& error_log() const noexcept { return error_log_; }
    // "nvJitLink" or "driver" (cuLink*, used when nvJitLink cannot be loaded).
    const std::string& backend() const noexcept { return backend_; }

private:
    ObjectCode link_with_nvjitlink(CodeType target);
    ObjectCode link_with_driver();

    std::vector<ObjectCode> inputs_;
    LinkerOptions options_;
    std::string info_log_;
    std::string error_log_;
    std::string backend_;
};

}  // namespace cudacore
