#include "remote/failure_reports.hpp"

#include "cudacore/warnings.hpp"

namespace cudacore::detail {

void FailureReports::report(const std::string& cause, const std::string& command,
                            const std::string& message) {
    {
        std::lock_guard lock(mutex_);
        if (!reported_.emplace(cause, command).second) return;
        any_ = true;
    }
    warn(WarningKind::remote_cache_failed, "RemoteProgramCache: " + message);
}

void FailureReports::succeeded(std::string_view command) {
    if (!any_.load(std::memory_order_relaxed)) return;
    std::lock_guard lock(mutex_);
    std::erase_if(reported_, [&](const auto& entry) {
        return entry.second.empty() || entry.second == command;
    });
    any_ = !reported_.empty();
}

}  // namespace cudacore::detail
