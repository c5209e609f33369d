#include "cudacore/warnings.hpp"

#include <memory>
#include <mutex>
#include <utility>

namespace cudacore {
namespace {

// Never destroyed: warnings may be raised from static destructors after main returns.
struct HandlerSlot {
    std::mutex mutex;
    std::shared_ptr<const WarningHandler> handler;
};

HandlerSlot& slot() {
    static auto* instance = new HandlerSlot;
    return *instance;
}

}  // namespace

WarningHandler set_warning_handler(WarningHandler handler) {
    auto next = handler ? std::make_shared<const WarningHandler>(std::move(handler)) : nullptr;
    std::lock_guard lock(slot().mutex);
    std::shared_ptr<const WarningHandler> previous = std::exchange(slot().handler, std::move(next));
    return previous ? *previous : WarningHandler{};
}

void warn(WarningKind kind, const std::string& message) noexcept {
    try {
        std::shared_ptr<const WarningHandler> handler;
        {
            std::lock_guard lock(slot().mutex);
            handler = slot().handler;
        }
        // Called outside the lock: the handler may itself install another handler.
        if (handler) (*handler)(Warning{kind, message});
    } catch (...) {
        // A warning must never turn into a crash (it may come from a destructor at exit).
    }
}

}  // namespace cudacore

#include "cudacore/errors.hpp"
#include "errors/driver_log.hpp"
#include "errors/release_report.hpp"

namespace cudacore::detail {

namespace {
thread_local ReleaseErrorCapture* active_capture = nullptr;
}  // namespace

ReleaseErrorCapture::ReleaseErrorCapture() noexcept : outer_(active_capture) {
    active_capture = this;
}

ReleaseErrorCapture::~ReleaseErrorCapture() { active_capture = outer_; }

void ReleaseErrorCapture::keep(CUresult status, const char* call, const std::string& object,
                               std::vector<std::string> driver_log) noexcept {
    if (status_ != CUDA_SUCCESS) return;
    try {
        call_ = call;
        object_ = object;
        driver_log_ = std::move(driver_log);
        status_ = status;
    } catch (...) {
    }
}

void ReleaseErrorCapture::rethrow() {
    if (status_ == CUDA_SUCCESS) return;
    const CUresult status = std::exchange(status_, CUDA_SUCCESS);
    throw DriverError(status, std::move(call_), std::move(object_), std::move(driver_log_));
}

void report_release_failure(CUresult status, const char* call, const std::string& object) noexcept {
    if (status == CUDA_SUCCESS) return;
    std::vector<std::string> driver_log;
    try {
        driver_log = take_driver_log(call);
    } catch (...) {
        discard_driver_log();
    }
    if (active_capture) {
        active_capture->keep(status, call, object, std::move(driver_log));
        return;
    }
    try {
        warn(WarningKind::release_failed,
             std::string(call) + " failed: " + driver_status_name(status) + " (" +
                 std::to_string(static_cast<int>(status)) + "): " + driver_status_text(status) +
                 (object.empty() ? std::string() : " [" + object + "]") + " while releasing" +
                 describe_driver_log(driver_log));
    } catch (...) {
    }
}

}  // namespace cudacore::detail

namespace cudacore {

std::string to_string(WarningKind kind) {
    // A switch, not support/enum_text.hpp: the errors layer uses no other (src/layers.txt).
    switch (kind) {
        case WarningKind::release_failed: return "release_failed";
        case WarningKind::not_cached: return "not_cached";
        case WarningKind::pch_off: return "pch_off";
        case WarningKind::remote_cache_failed: return "remote_cache_failed";
        case WarningKind::disk_cache_repaired: return "disk_cache_repaired";
        case WarningKind::secret_file_exposed: return "secret_file_exposed";
        case WarningKind::standard_headers_off: return "standard_headers_off";
    }
    return "WarningKind(" + std::to_string(static_cast<int>(kind)) + ")";
}

}  // namespace cudacore
