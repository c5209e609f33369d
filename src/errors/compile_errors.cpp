// The compiler and linker errors (cudacore/compile_errors.hpp): their messages name the program
// and the log's first error line, and add the hints the log carries.
#include "cudacore/compile_errors.hpp"

#include "errors/compile_hint.hpp"

#include <sstream>

namespace cudacore {

namespace {

std::string log_message(const char* what, const std::string& name, const std::string& log,
                        const std::string& backend) {
    std::ostringstream out;
    out << what << " '" << name << "' failed";
    if (!backend.empty()) out << " (" << backend << ")";
    std::string line = first_error_line(log);
    if (!line.empty()) out << ": " << line;
    return out.str();
}

// The log's hint lines (the options that cure its error), each as "; hint: ...".
std::string hints_of(const std::string& log) {
    std::string hints;
    std::istringstream in(log);
    std::string line;
    while (std::getline(in, line)) {
        if (line.starts_with(detail::kCompileHintPrefix))
            hints += "; hint: " + line.substr(detail::kCompileHintPrefix.size());
    }
    return hints;
}

}  // namespace

CompilerApiError::CompilerApiError(std::string call, int status, std::string status_name,
                                   std::string object)
    : Error(call + " failed: " + status_name + " (" + std::to_string(status) + ")" +
            (object.empty() ? "" : " [" + object + "]")),
      call_(std::move(call)),
      status_(status),
      status_name_(std::move(status_name)) {}

CompileError::CompileError(std::string program_name, std::string log,
                           std::vector<std::string> options, std::string backend,
                           nvrtcResult nvrtc_status)
    : Error(log_message("compiling", program_name, log, backend) + hints_of(log)),
      program_name_(std::move(program_name)),
      log_(std::move(log)),
      options_(std::move(options)),
      nvrtc_status_(nvrtc_status) {}

LinkError::LinkError(std::string name, std::string log, std::vector<std::string> options,
                     std::string backend, std::string failed_call)
    : Error(log_message("linking", name, log, backend) +
            (failed_call.empty() ? std::string() : " [" + failed_call + "]")),
      name_(std::move(name)),
      log_(std::move(log)),
      options_(std::move(options)) {}

}  // namespace cudacore
