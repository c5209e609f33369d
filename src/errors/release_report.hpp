// Reporting a failed release (a destructor's driver call) to the warning handler. Which failures
// are worth it is the reset-tolerance rule's to say (runtime/release/reset_tolerance.hpp: check_release).
#pragma once

#include <cuda.h>

#include <string>
#include <vector>

namespace cudacore::detail {

// close() on a handle object wants the errors of the release it causes, where a destructor
// ignores them: while a ReleaseErrorCapture lives on a thread, report_release_failure on that
// thread keeps the first failure here instead of warning, and rethrow() throws it as a
// DriverError. Releases done on other threads (deferred ones) still warn as usual.
class ReleaseErrorCapture {
public:
    ReleaseErrorCapture() noexcept;
    ~ReleaseErrorCapture();
    ReleaseErrorCapture(const ReleaseErrorCapture&) = delete;
    ReleaseErrorCapture& operator=(const ReleaseErrorCapture&) = delete;
    // Keeps a failure (the first one) with the driver's log lines for it; called by
    // report_release_failure.
    void keep(CUresult status, const char* call, const std::string& object,
              std::vector<std::string> driver_log) noexcept;
    // Throws the kept failure as DriverError(status, call, object, driver_log), if any.
    void rethrow();

private:
    ReleaseErrorCapture* outer_;
    CUresult status_ = CUDA_SUCCESS;
    std::string call_;
    std::string object_;
    std::vector<std::string> driver_log_;
};

// Reports "CALL failed: NAME (N): TEXT [OBJECT] while releasing; driver log: LINE | LINE" as
// WarningKind::release_failed (nothing for success; the log part only where the driver logged
// something on this thread, errors/driver_log.hpp). Never throws.
void report_release_failure(CUresult status, const char* call, const std::string& object) noexcept;

}  // namespace cudacore::detail
