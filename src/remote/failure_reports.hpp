// The warnings of a RemoteProgramCache: one per cause, until a success of the command that ends
// the cause (any success, for a connection's causes) lets it be warned about again. Thread-safe.
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace cudacore::detail {

class FailureReports {
public:
    // Warns (WarningKind::remote_cache_failed) with "RemoteProgramCache: " and `message`, unless
    // `cause` was warned about and not ended since. `command`: the command whose success ends the
    // cause ("" for a connection's cause, ended by any success).
    void report(const std::string& cause, const std::string& command, const std::string& message);
    // `command` succeeded: the connection's causes and that command's may be reported again.
    void succeeded(std::string_view command);

private:
    std::mutex mutex_;
    std::map<std::string, std::string> reported_;  // cause -> the command that ends it
    std::atomic<bool> any_{false};
};

}  // namespace cudacore::detail
