// One nvJitLink link (add the inputs, complete, take the code), shared by the Linker in this
// process and the link worker process (cudacore-link-worker) that isolated links run in; and the
// parent's side of an isolated link.
#pragma once

#include "cudacore/object_code.hpp"

#include <nvJitLink.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace cudacore::detail {

// What one nvJitLink run gave: the code, or the failure; the logs either way.
struct NvJitLinkRun {
    bool linked = false;
    std::string code;
    // The call that failed and how: "nvJitLinkComplete failed: NVJITLINK_ERROR_PTX_COMPILE", or
    // for an isolated link whose worker crashed "nvJitLinkAddData(cubin 'a', 10 bytes) crashed
    // the link worker process: killed by signal 11 (Segmentation fault)".
    std::string failure;
    std::string info_log;
    std::string error_log;
    // What the linker printed on the process's standard output and error instead of logging it
    // (nvJitLink 13 prints some link errors there and reports success): only an isolated link
    // can see it, since in this process it goes to the caller's terminal.
    std::string console;
};

// Before adding input i (i < number of inputs), and before completing (i == kCompleteStep).
inline constexpr std::size_t kCompleteStep = std::numeric_limits<std::size_t>::max();
using LinkStepObserver = std::function<void(std::size_t step)>;

// nvJitLinkCreate with `flags`; throws CompilerApiError naming `object` when it fails.
nvJitLinkHandle create_nvjitlink(const std::vector<std::string>& flags, const std::string& object);

// Adds `inputs` (named `names`, which must outlive `handle`) to `handle`, completes and takes
// the linked cubin or PTX. Failures of AddData and Complete are returned; a failure to take
// the code throws CompilerApiError.
NvJitLinkRun run_nvjitlink(nvJitLinkHandle handle, const std::vector<ObjectCode>& inputs,
                           const std::vector<std::string>& names, CodeType target,
                           const std::string& object, const LinkStepObserver& before_step = {});

// The same link in the link worker process `worker`: inputs, names, flags and target are sent
// to it, and what it linked or how it failed comes back. A worker killed by a signal or by the
// time limit (zero: none), or one that exits without a reply (nvJitLink's fatal errors exit), is
// a failure naming the step it was in (the input being added, or the completion) and how it
// ended. Throws LoaderError when the worker cannot be started, Error when it reports an error of
// its own (a malformed request).
NvJitLinkRun run_nvjitlink_isolated(const std::filesystem::path& worker,
                                    const std::vector<ObjectCode>& inputs,
                                    const std::vector<std::string>& names,
                                    const std::vector<std::string>& flags, CodeType target,
                                    std::chrono::milliseconds timeout);

// The link worker: reads a request on standard input, links, writes the reply on descriptor 3.
// Returns the process's exit status.
int link_worker_main();

}  // namespace cudacore::detail
