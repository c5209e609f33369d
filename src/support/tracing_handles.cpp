// The ranges a tool shows (ended here; started in tracing.cpp, beside the domains) and the names
// of threads.
#include "cudacore/tracing_handles.hpp"

#include "support/tracing_domain.hpp"

#include <nvtx3/nvToolsExt.h>

#include <sys/syscall.h>
#include <unistd.h>

#include <string>

namespace cudacore::tracing {

void end_range(RangeId& range) noexcept {
    if (!range.domain_) return;
    nvtxDomainRangeEnd(range.domain_->handle, range.id_);
    range = RangeId();
}

void name_os_thread(std::uint32_t thread_id, std::string_view name) noexcept {
    if (!tool_attached()) return;
    try {
        const std::string text(name);
        nvtxNameOsThreadA(thread_id, text.c_str());
    } catch (...) {
        // No memory for the name: the tool shows the thread's number.
    }
}

void name_current_thread(std::string_view name) noexcept {
    if (!tool_attached()) return;
    name_os_thread(static_cast<std::uint32_t>(::syscall(SYS_gettid)), name);
}

}  // namespace cudacore::tracing
