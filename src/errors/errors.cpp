#include "cudacore/errors.hpp"
#include "errors/closed_object.hpp"
#include "errors/driver_log.hpp"


#include <sstream>

namespace cudacore {

namespace {

std::string join(const std::vector<std::string>& items, const char* separator) {
    std::string out;
    for (const auto& item : items) {
        if (!out.empty()) out += separator;
        out += item;
    }
    return out;
}

std::string loader_message(const std::string& library, const std::vector<std::string>& searched,
                           const std::string& env_var, const std::string& reason) {
    std::ostringstream out;
    out << "cannot load " << library << ": " << reason;
    if (!searched.empty()) out << "; searched: " << join(searched, ", ");
    if (!env_var.empty()) out << "; set " << env_var << " to its full path";
    return out.str();
}

// What a stream-capture status means for the call that got it (empty for other statuses).
const char* capture_hint(CUresult status) {
    switch (status) {
        case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED:
            return "a stream capture was in progress and this call is not allowed during it (the "
                   "capture is now invalidated)";
        case CUDA_ERROR_STREAM_CAPTURE_INVALIDATED:
            return "a stream capture was in progress and an earlier call during it invalidated it";
        case CUDA_ERROR_STREAM_CAPTURE_IMPLICIT:
            return "a stream capture was in progress and this call would have synchronised "
                   "implicitly with the legacy default stream";
        case CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD:
            return "a stream capture was in progress, begun by another thread";
        case CUDA_ERROR_STREAM_CAPTURE_UNJOINED:
            return "a stream capture was in progress and a stream forked from it was not joined";
        case CUDA_ERROR_STREAM_CAPTURE_ISOLATION:
            return "a stream capture was in progress and this call mixed it with another capture";
        case CUDA_ERROR_STREAM_CAPTURE_MERGE:
            return "a stream capture was in progress and this call would merge two captures";
        case CUDA_ERROR_STREAM_CAPTURE_UNMATCHED:
            return "no stream capture was in progress on this stream";
        default: return "";
    }
}

std::string driver_message(CUresult status, const std::string& call, const std::string& object) {
    std::ostringstream out;
    out << call << " failed: " << driver_status_name(status) << " (" << static_cast<int>(status)
        << "): " << driver_status_text(status);
    if (const char* hint = capture_hint(status); *hint) out << "; " << hint;
    if (!object.empty()) out << " [" << object << "]";
    return out.str();
}

}  // namespace

LoaderError::LoaderError(std::string library, std::vector<std::string> searched,
                         std::string env_var, std::string reason)
    : Error(loader_message(library, searched, env_var, reason)),
      library_(std::move(library)),
      searched_(std::move(searched)),
      env_var_(std::move(env_var)),
      reason_(std::move(reason)) {}

DriverError::DriverError(CUresult status, std::string call, std::string object)
    : Error(driver_message(status, call, object)),
      status_(status),
      status_name_(driver_status_name(status)),
      status_text_(driver_status_text(status)),
      call_(std::move(call)),
      object_(std::move(object)) {}

DriverError::DriverError(CUresult status, std::string call, std::string object,
                         std::vector<std::string> driver_log)
    : Error(driver_message(status, call, object) + detail::describe_driver_log(driver_log)),
      status_(status),
      status_name_(driver_status_name(status)),
      status_text_(driver_status_text(status)),
      call_(std::move(call)),
      object_(std::move(object)),
      driver_log_(std::move(driver_log)) {}

NvmlError::NvmlError(std::string call, int status, std::string status_text, std::string object)
    : Error(call + " failed: NVML status " + std::to_string(status) + " (" + status_text + ")" +
            (object.empty() ? "" : " [" + object + "]")),
      call_(std::move(call)),
      status_(status),
      status_text_(std::move(status_text)) {}

// A tool's own message ("k.cu(3): error: ...", "ptxas fatal : ...") before a line that only names
// a status ("ERROR NVJITLINK_ERROR_PTX_COMPILE: JIT the PTX (k.ptx)", which nvJitLink writes first).
std::string first_error_line(const std::string& log) {
    std::istringstream in(log);
    std::string line, first_non_empty, first_status;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.find_first_not_of(" \t") == std::string::npos) continue;
        if (first_non_empty.empty()) first_non_empty = line;
        if (line.find("error") != std::string::npos || line.find("fatal") != std::string::npos) return line;
        if (first_status.empty() && line.find("ERROR") != std::string::npos) first_status = line;
    }
    return first_status.empty() ? first_non_empty : first_status;
}

}  // namespace cudacore

namespace cudacore::detail {

void throw_closed_object(const char* operation, const std::string& object, const char* type) {
    throw InvalidArgumentError(std::string(operation) + ": " + object + " is closed (" + type +
                               "::close was called on this object)");
}

void throw_moved_from(const char* operation, const char* type, const char* what) {
    throw InvalidArgumentError(std::string(operation) + ": the " + type +
                               " object was moved from (it holds no " + what + ")");
}

}  // namespace cudacore::detail
