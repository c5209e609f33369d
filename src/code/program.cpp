#include "cudacore/program.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/linker.hpp"
#include "loader/compiler_apis.hpp"
#include "loader/driver_api.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <system_error>

namespace cudacore {

namespace {

const char* source_type_name(SourceType type) { return type == SourceType::cxx ? "C++" : "PTX"; }

std::string describe(const ProgramOptions& options) { return "program '" + options.name + "'"; }

// The checks compile() and flags() share: which targets each source type can produce.
void require_supported_target(SourceType source_type, CodeType target,
                              const ProgramOptions& options) {
    if (source_type == SourceType::cxx) {
        if (target == CodeType::cubin && options.link_time_optimization.value_or(false)) {
            throw InvalidArgumentError(describe(options) + ": link_time_optimization makes NVRTC "
                                       "produce LTO-IR, not cubin; compile to ltoir and link "
                                       "with a Linker using link_time_optimization");
        }
        if (target == CodeType::cubin && options.arch && options.arch->rfind("compute_", 0) == 0) {
            throw InvalidArgumentError(describe(options) + ": a cubin needs a real arch (sm_NN), "
                                       "not the virtual " + *options.arch);
        }
        if (target == CodeType::ptx || target == CodeType::cubin || target == CodeType::ltoir)
            return;
        throw InvalidArgumentError(describe(options) + ": a C++ program compiles to ptx, cubin or "
                                   "ltoir, not " + std::string(to_string(target)));
    }
    if (target != CodeType::cubin) {
        throw InvalidArgumentError(describe(options) + ": a PTX program compiles to cubin only, not " +
                                   std::string(to_string(target)));
    }
}

struct NvrtcProgramDeleter {
    void operator()(nvrtcProgram program) const noexcept {
        detail::nvrtc().nvrtcDestroyProgram(&program);
    }
};
using NvrtcProgramHandle = std::unique_ptr<std::remove_pointer_t<nvrtcProgram>, NvrtcProgramDeleter>;

std::string program_log(const detail::NvrtcApi& api, nvrtcProgram program) {
    size_t size = 0;
    if (api.nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size <= 1) return {};
    std::string log(size, '\0');
    if (api.nvrtcGetProgramLog(program, log.data()) != NVRTC_SUCCESS) return {};
    log.resize(size - 1);  // drop the terminating NUL
    return log;
}

std::string compiled_code(const detail::NvrtcApi& api, nvrtcProgram program, CodeType target,
                          const std::string& object) {
    size_t size = 0;
    std::string code;
    switch (target) {
        case CodeType::ptx:
            detail::check_nvrtc(api.nvrtcGetPTXSize(program, &size), "nvrtcGetPTXSize", object);
            code.resize(size);
            detail::check_nvrtc(api.nvrtcGetPTX(program, code.data()), "nvrtcGetPTX", object);
            while (!code.empty() && code.back() == '\0') code.pop_back();  // PTX is NUL-terminated
            break;
        case CodeType::cubin:
            detail::check_nvrtc(api.nvrtcGetCUBINSize(program, &size), "nvrtcGetCUBINSize", object);
            if (size == 0) {
                throw InvalidArgumentError(object + ": NVRTC produced no cubin (a virtual arch or "
                                           "-dlto among the flags?)");
            }
            code.resize(size);
            detail::check_nvrtc(api.nvrtcGetCUBIN(program, code.data()), "nvrtcGetCUBIN", object);
            break;
        default:
            detail::check_nvrtc(api.nvrtcGetLTOIRSize(program, &size), "nvrtcGetLTOIRSize", object);
            code.resize(size);
            detail::check_nvrtc(api.nvrtcGetLTOIR(program, code.data()), "nvrtcGetLTOIR", object);
            break;
    }
    return code;
}

// A private directory for NVRTC's time trace, removed with everything in it.
class TraceDirectory {
public:
    explicit TraceDirectory(const std::string& object) {
        std::string pattern =
            (std::filesystem::temp_directory_path() / "cudacore-trace-XXXXXX").string();
        if (::mkdtemp(pattern.data()) == nullptr) {
            throw CompilerApiError("mkdtemp", errno, std::strerror(errno),
                                   object + ", directory for the header trace " + pattern);
        }
        path_ = pattern;
    }
    ~TraceDirectory() {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    TraceDirectory(const TraceDirectory&) = delete;
    TraceDirectory& operator=(const TraceDirectory&) = delete;
    const std::filesystem::path& path() const noexcept { return path_; }

private:
    std::filesystem::path path_;
};

// The header files named by the "Processing Header File" events of an NVRTC time trace.
std::vector<std::string> headers_in_trace(const std::filesystem::path& trace,
                                          const std::string& object) {
    std::ifstream in(trace, std::ios::binary);
    if (!in) {
        throw CompilerApiError("nvrtcCompileProgram", 0, "no time trace written",
                               object + ", expected " + trace.string());
    }
    nlohmann::json document;
    try {
        document = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
        throw CompilerApiError("nvrtcCompileProgram", 0,
                               std::string("unreadable time trace: ") + e.what(),
                               object + ", " + trace.string());
    }
    std::vector<std::string> headers;
    const auto events = document.find("traceEvents");
    if (events == document.end() || !events->is_array()) return headers;
    for (const auto& event : *events) {
        if (!event.is_object() || event.value("name", "") != "Processing Header File") continue;
        const auto args = event.find("args");
        if (args == event.end() || !args->is_object()) continue;
        const std::string name = args->value("detail", "");
        if (name.empty()) continue;
        std::error_code error;
        const std::filesystem::path path(name);
        // A bare name that is no file is one of NVRTC's built-in headers (covered by its version).
        if (!path.has_parent_path() && !std::filesystem::is_regular_file(path, error)) continue;
        headers.push_back(std::filesystem::absolute(path, error).lexically_normal().string());
    }
    std::sort(headers.begin(), headers.end());
    headers.erase(std::unique(headers.begin(), headers.end()), headers.end());
    return headers;
}

}  // namespace

ObjectCode Program::compile(CodeType target, const std::vector<std::string>& name_expressions,
                            std::vector<std::string>& headers_read) {
    headers_read.clear();
    if (source_type_ == SourceType::ptx) return compile(target, name_expressions);
    if (options_.fdevice_time_trace) {
        throw InvalidArgumentError(describe(options_) + ": cannot record the headers a compile "
                                   "reads while fdevice_time_trace is set (the trace is yours)");
    }
    const std::string object = describe(options_) + " (" + std::string(to_string(target)) + ")";
    TraceDirectory directory(object);
    const std::filesystem::path trace = directory.path() / "trace";
    trace_path_ = trace.string();
    struct ClearTracePath {
        std::string& path;
        ~ClearTracePath() { path.clear(); }
    } clear{trace_path_};
    ObjectCode code = compile(target, name_expressions);
    // NVRTC appends ".json" to the name it is given.
    headers_read = headers_in_trace(trace.string() + ".json", object);
    return code;
}

Program::Program(std::string source, SourceType source_type, ProgramOptions options)
    : source_(std::move(source)), source_type_(source_type), options_(std::move(options)) {
    if (source_.find_first_not_of(" \t\r\n") == std::string::npos) {
        throw InvalidArgumentError(std::string("Program: empty ") + source_type_name(source_type_) +
                                   " source for " + describe(options_));
    }
}

std::vector<std::string> Program::flags(CodeType target) const {
    require_supported_target(source_type_, target, options_);
    if (source_type_ == SourceType::cxx) return nvrtc_flags(options_, target == CodeType::ltoir);
    return Linker({ObjectCode::from_ptx(source_, options_.name)}, to_linker_options(options_))
        .flags();
}

std::string Program::backend() const {
    if (source_type_ == SourceType::cxx) return "NVRTC";
    if (!detail::nvjitlink_available() && detail::driver_available()) return "driver";
    return "nvJitLink";
}

ObjectCode Program::compile(CodeType target, const std::vector<std::string>& name_expressions) {
    log_.clear();
    require_supported_target(source_type_, target, options_);

    if (source_type_ == SourceType::ptx) {
        if (!name_expressions.empty()) {
            throw InvalidArgumentError(describe(options_) +
                                       ": name expressions need a C++ program; a PTX program's "
                                       "kernels are reached by their PTX names");
        }
        Linker linker({ObjectCode::from_ptx(source_, options_.name)}, to_linker_options(options_));
        try {
            ObjectCode linked = linker.link(CodeType::cubin);
            log_ = linker.info_log();
            return ObjectCode::from_cubin(std::string(linked.code()), options_.name);
        } catch (const LinkError& e) {
            log_ = e.log();
            throw CompileError(options_.name, e.log(), e.options(), linker.backend());
        }
    }

    std::vector<std::string> flags = this->flags(target);
    if (!trace_path_.empty()) flags.push_back("--fdevice-time-trace=" + trace_path_);
    const auto& api = detail::nvrtc();
    const std::string object = describe(options_) + " (" + std::string(to_string(target)) + ")";

    nvrtcProgram raw = nullptr;
    detail::check_nvrtc(api.nvrtcCreateProgram(&raw, source_.c_str(), options_.name.c_str(), 0,
                                               nullptr, nullptr),
                        "nvrtcCreateProgram", object);
    NvrtcProgramHandle program(raw);

    for (const auto& expression : name_expressions) {
        detail::check_nvrtc(api.nvrtcAddNameExpression(raw, expression.c_str()),
                            "nvrtcAddNameExpression",
                            object + ", name expression '" + expression + "'");
    }

    std::vector<const char*> argv;
    argv.reserve(flags.size());
    for (const auto& flag : flags) argv.push_back(flag.c_str());
    const nvrtcResult status =
        api.nvrtcCompileProgram(raw, static_cast<int>(argv.size()), argv.data());
    log_ = program_log(api, raw);
    if (status != NVRTC_SUCCESS) {
        // Compilation errors and rejected options both come with a log naming the problem; add
        // the status so an empty log still says what failed.
        std::string log = log_;
        if (!log.empty() && log.back() != '\n') log += '\n';
        const char* status_name = api.nvrtcGetErrorString(status);
        log += std::string("nvrtcCompileProgram failed: ") + (status_name ? status_name : "error");
        throw CompileError(options_.name, std::move(log), flags, "NVRTC");
    }

    SymbolMap symbols;
    for (const auto& expression : name_expressions) {
        const char* lowered = nullptr;
        detail::check_nvrtc(api.nvrtcGetLoweredName(raw, expression.c_str(), &lowered),
                            "nvrtcGetLoweredName", object + ", name expression '" + expression + "'");
        symbols.emplace(expression, lowered ? lowered : expression);
    }
    return ObjectCode::from_bytes(target, compiled_code(api, raw, target, object), options_.name,
                                  std::move(symbols));
}

}  // namespace cudacore
