// NVTX ranges in the "cudacore" domain, through the toolkit's header-only NVTX3: with no tool
// attached (NVTX_INJECTION64_PATH unset, no profiler) a range costs two calls that return at once;
// a tool (Nsight Systems, or any library named by NVTX_INJECTION64_PATH) sees each range by name.
#pragma once

#include <nvtx3/nvToolsExt.h>

namespace cudacore::detail {

// The "cudacore" domain, created on first use (thread-safe, never destroyed).
nvtxDomainHandle_t nvtx_domain() noexcept;

// A range pushed by the constructor and popped by the destructor, on this thread. `name` must
// outlive the range (a string literal). Never throws.
class NvtxRange {
public:
    explicit NvtxRange(const char* name) noexcept;
    ~NvtxRange();
    NvtxRange(const NvtxRange&) = delete;
    NvtxRange& operator=(const NvtxRange&) = delete;

private:
    nvtxDomainHandle_t domain_;
};

}  // namespace cudacore::detail
