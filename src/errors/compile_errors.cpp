// The compiler and linker errors (cudacore/compile_errors.hpp): their messages name the program
// and the log's first error line, and add the hints the log carries.
#include "cudacore/compile_errors.hpp"

#include "errors/compile_hint.hpp"

#include <sstream>

namespace cudacore {

namespace {

// NVRTC's name of `status` (its headers' enum, so that the message needs no NVRTC loaded).
const char* nvrtc_status_name(nvrtcResult status) {
    switch (status) {
        case NVRTC_SUCCESS: return "NVRTC_SUCCESS";
        case NVRTC_ERROR_OUT_OF_MEMORY: return "NVRTC_ERROR_OUT_OF_MEMORY";
        case NVRTC_ERROR_PROGRAM_CREATION_FAILURE: return "NVRTC_ERROR_PROGRAM_CREATION_FAILURE";
        case NVRTC_ERROR_INVALID_INPUT: return "NVRTC_ERROR_INVALID_INPUT";
        case NVRTC_ERROR_INVALID_PROGRAM: return "NVRTC_ERROR_INVALID_PROGRAM";
        case NVRTC_ERROR_INVALID_OPTION: return "NVRTC_ERROR_INVALID_OPTION";
        case NVRTC_ERROR_COMPILATION: return "NVRTC_ERROR_COMPILATION";
        case NVRTC_ERROR_BUILTIN_OPERATION_FAILURE: return "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE";
        case NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION:
            return "NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION";
        case NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION:
            return "NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION";
        case NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID: return "NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID";
        case NVRTC_ERROR_INTERNAL_ERROR: return "NVRTC_ERROR_INTERNAL_ERROR";
        case NVRTC_ERROR_TIME_FILE_WRITE_FAILED: return "NVRTC_ERROR_TIME_FILE_WRITE_FAILED";
        case NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED: return "NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED";
        case NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED: return "NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED";
        case NVRTC_ERROR_PCH_CREATE: return "NVRTC_ERROR_PCH_CREATE";
        case NVRTC_ERROR_CANCELLED: return "NVRTC_ERROR_CANCELLED";
        case NVRTC_ERROR_TIME_TRACE_FILE_WRITE_FAILED: return "NVRTC_ERROR_TIME_TRACE_FILE_WRITE_FAILED";
    }
    return nullptr;
}

// "compiling 'k.cu' failed (NVRTC; nvrtcCompileProgram: NVRTC_ERROR_COMPILATION): <first error
// line>": the program, the compiler, the call and its status where NVRTC failed.
std::string log_message(const char* what, const std::string& name, const std::string& log,
                        const std::string& backend, nvrtcResult nvrtc_status = NVRTC_SUCCESS) {
    std::ostringstream out;
    out << what << " '" << name << "' failed";
    std::string compiler = backend;
    if (nvrtc_status != NVRTC_SUCCESS) {
        const char* status_name = nvrtc_status_name(nvrtc_status);
        compiler += std::string(compiler.empty() ? "" : "; ") + "nvrtcCompileProgram: " +
                    (status_name ? status_name : "NVRTC status " + std::to_string(nvrtc_status));
    }
    if (!compiler.empty()) out << " (" << compiler << ")";
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
    : Error(log_message("compiling", program_name, log, backend, nvrtc_status) + hints_of(log)),
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
