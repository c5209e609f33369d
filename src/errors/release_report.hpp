// Reporting a failed release (a destructor's driver call) to the warning handler. Which failures
// are worth it is the reset-tolerance rule's to say (runtime/reset_tolerance.hpp: check_release).
#pragma once

#include <cuda.h>

#include <string>

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
    // Keeps a failure (the first one); called by report_release_failure.
    void keep(CUresult status, const char* call, const std::string& object) noexcept;
    // Throws the kept failure as DriverError(status, call, object), if any.
    void rethrow();

private:
    ReleaseErrorCapture* outer_;
    CUresult status_ = CUDA_SUCCESS;
    std::string call_;
    std::string object_;
};

// Reports "CALL failed: NAME (N): TEXT [OBJECT] while releasing" as WarningKind::release_failed
// (nothing for success). Never throws.
void report_release_failure(CUresult status, const char* call, const std::string& object) noexcept;

}  // namespace cudacore::detail
