#include "code/nvrtc_compile.hpp"

#include "cudacore/compile_errors.hpp"
#include "cudacore/errors.hpp"
#include "code/compiler_environment.hpp"
#include "loader/compiler_calls_at_exit.hpp"
#include "loader/compiler_apis.hpp"

#include <algorithm>
#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <string_view>
#include <type_traits>

namespace cudacore::detail {

namespace {

// Throws CompilerApiError naming the call, NVRTC's status and the program unless it succeeded.
void check_nvrtc(nvrtcResult status, const char* call, const std::string& object) {
    if (status == NVRTC_SUCCESS) return;
    const char* name = nvrtc().nvrtcGetErrorString(status);
    throw CompilerApiError(call, static_cast<int>(status), name ? name : "NVRTC error", object);
}

// NVRTC's PCH heap is process-wide and nvrtcSetPCHHeapSize frees it: PCH compiles hold this
// shared, resizing holds it exclusively. Leaked on purpose: usable from static destructors.
std::shared_mutex& pch_heap_mutex() {
    static auto* mutex = new std::shared_mutex;
    return *mutex;
}

struct NvrtcProgramDeleter {
    void operator()(nvrtcProgram program) const noexcept { destroy_nvrtc_program(program); }
};

std::string program_log(const NvrtcApi& api, nvrtcProgram program) {
    size_t size = 0;
    if (api.nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size <= 1) return {};
    std::string log(size, '\0');
    if (api.nvrtcGetProgramLog(program, log.data()) != NVRTC_SUCCESS) return {};
    log.resize(size - 1);  // drop the terminating NUL
    return log;
}

std::string compiled_code(const NvrtcApi& api, nvrtcProgram program, CodeType target,
                          const std::string& object) {
    size_t size = 0;
    std::string code;
    switch (target) {
        case CodeType::ptx:
            check_nvrtc(api.nvrtcGetPTXSize(program, &size), "nvrtcGetPTXSize", object);
            code.resize(size);
            check_nvrtc(api.nvrtcGetPTX(program, code.data()), "nvrtcGetPTX", object);
            while (!code.empty() && code.back() == '\0') code.pop_back();  // PTX is NUL-terminated
            break;
        case CodeType::cubin:
            check_nvrtc(api.nvrtcGetCUBINSize(program, &size), "nvrtcGetCUBINSize", object);
            if (size == 0) {
                throw InvalidArgumentError(object + ": NVRTC produced no cubin (a virtual arch or "
                                           "-dlto among the flags?)");
            }
            code.resize(size);
            check_nvrtc(api.nvrtcGetCUBIN(program, code.data()), "nvrtcGetCUBIN", object);
            break;
        default:
            check_nvrtc(api.nvrtcGetLTOIRSize(program, &size), "nvrtcGetLTOIRSize", object);
            code.resize(size);
            check_nvrtc(api.nvrtcGetLTOIR(program, code.data()), "nvrtcGetLTOIR", object);
            break;
    }
    return code;
}

// Takes NVRTC's PCH messages out of the log:
//   "name": creating precompiled header file "/tmp/.../name_0.pch"
//   "name": using precompiled header file "/tmp/.../other_0.pch"
void take_pch_messages(NvrtcAttempt& attempt) {
    std::string kept;
    std::string_view rest = attempt.log;
    while (!rest.empty()) {
        const size_t end = rest.find('\n');
        const std::string_view line = rest.substr(0, end == std::string_view::npos ? rest.size() : end + 1);
        rest.remove_prefix(line.size());
        const bool creating = line.find(": creating precompiled header file \"") != std::string_view::npos;
        const bool using_ = line.find(": using precompiled header file \"") != std::string_view::npos;
        if (!creating && !using_) {
            kept += line;
            continue;
        }
        attempt.pch_used = attempt.pch_used || using_;
        const size_t open = line.find("header file \"") + 13;
        const size_t close = line.find('"', open);
        if (close != std::string_view::npos)
            (using_ ? attempt.pch_used_file : attempt.pch_created_file) = line.substr(open, close - open);
    }
    attempt.log = std::move(kept);
}

// "unable to obtain mapped memory": the front end could not map the PCH file it was writing
// (a full filesystem, a file-size limit); the line itself does not say PCH.
bool names_pch(std::string_view line) {
    // "unable to obtain mapped memory": NVRTC could not map its PCH heap (a file-size limit).
    return line.find("PCH") != std::string_view::npos ||
           line.find("unable to obtain mapped memory") != std::string_view::npos ||
           line.find("precompiled header") != std::string_view::npos ||
           line.find("-pch") != std::string_view::npos;
}

bool is_error_line(std::string_view line) { return line.find("error") != std::string_view::npos; }

template <class Visit>
void for_each_line(std::string_view text, Visit visit) {
    while (!text.empty()) {
        const size_t end = text.find('\n');
        visit(text.substr(0, end));
        if (end == std::string_view::npos) break;
        text.remove_prefix(end + 1);
    }
}

// NVRTC's flow callback: 1 cancels the compile. Once cancelled a token stays so, as NVRTC
// requires of the answers; thread-safe and calls no NVRTC function.
int cancelled(void* token, void*) {
    register_again_while_compiling();  // see loader/compiler_calls_at_exit.hpp
    return token && static_cast<const CancellationToken*>(token)->is_cancelled() ? 1 : 0;
}

int never_cancelled(void*, void*) { return 0; }

std::string status_name(nvrtcResult status) {
    const char* name = nvrtc().nvrtcGetErrorString(status);
    return name ? name : "NVRTC error " + std::to_string(static_cast<int>(status));
}

// nvrtcCompileProgram, holding the PCH heap when `pch`, asking `cancellation` (when not null)
// through NVRTC's flow callback where NVRTC has one. NVRTC_ERROR_CANCELLED once it is cancelled.
nvrtcResult compile_program(nvrtcProgram raw, const std::vector<const char*>& argv, bool pch,
                            const CancellationToken* cancellation, const std::string& object) {
    const auto& api = nvrtc();
    // What keys hold of the environment is what NVRTC's first compile reads (some of it only then).
    (void)nvrtc_environment_in_keys();
    // Also without a token, while the exit's wait is still registered from inside compiles.
    const bool flow = (cancellation || registering_while_compiling()) && api.nvrtcSetFlowCallback;
    if (flow) {
        check_nvrtc(api.nvrtcSetFlowCallback(raw, cancelled, const_cast<CancellationToken*>(cancellation)),
                    "nvrtcSetFlowCallback", object);
    }
    nvrtcResult status;
    {
        std::shared_lock<std::shared_mutex> heap_in_use;
        if (pch) heap_in_use = std::shared_lock(pch_heap_mutex());
        status = api.nvrtcCompileProgram(raw, static_cast<int>(argv.size()), argv.data());
    }
    // The token may go before a wrapped program does: NVRTC is left no pointer to it.
    if (flow) api.nvrtcSetFlowCallback(raw, never_cancelled, nullptr);
    return cancellation && cancellation->is_cancelled() ? NVRTC_ERROR_CANCELLED : status;
}

}  // namespace

void destroy_nvrtc_program(nvrtcProgram program) noexcept {
    // After the compile that made it, perhaps after the exit began (a Program dropped then).
    const CompilerCallUnlessExiting destroying;
    if (!destroying.began()) return;
    try {
        nvrtc().nvrtcDestroyProgram(&program);
    } catch (...) {  // release errors are ignored
    }
}

NvrtcAttempt nvrtc_compile(const std::string& source, const std::string& name,
                           const std::vector<std::string>& flags,
                           const std::vector<std::string>& name_expressions, CodeType target,
                           const std::string& object, bool pch, nvrtcProgram existing,
                           bool add_name_expressions, const InMemoryHeaders& headers,
                           const CancellationToken* cancellation) {
    const auto& api = nvrtc();
    // Under way until it returns (the program's destruction, perhaps later, is another call):
    // the process's exit waits for it.
    const CompilerCall under_way("nvrtcCompileProgram");
    NvrtcAttempt attempt;
    if (cancellation && cancellation->is_cancelled()) {
        attempt.status = NVRTC_ERROR_CANCELLED;
        return attempt;
    }
    nvrtcProgram raw = existing;
    if (raw == nullptr) {
        check_nvrtc(api.nvrtcCreateProgram(&raw, source.c_str(), name.c_str(),
                                           static_cast<int>(headers.names.size()),
                                           headers.contents.data(), headers.names.data()),
                    "nvrtcCreateProgram", object);
        attempt.program = std::shared_ptr<std::remove_pointer_t<nvrtcProgram>>(
            raw, NvrtcProgramDeleter{});
    }

    if (add_name_expressions) {
        for (const auto& expression : name_expressions) {
            check_nvrtc(api.nvrtcAddNameExpression(raw, expression.c_str()),
                        "nvrtcAddNameExpression",
                        object + ", name expression '" + expression + "'");
        }
    }

    std::vector<const char*> argv;
    argv.reserve(flags.size());
    for (const auto& flag : flags) argv.push_back(flag.c_str());
    attempt.status = compile_program(raw, argv, pch, cancellation, object);
    attempt.log = program_log(api, raw);
    if (pch) {
        take_pch_messages(attempt);
        attempt.pch_create_status = api.nvrtcGetPCHCreateStatus(raw);
        if (attempt.pch_create_status == NVRTC_SUCCESS ||
            attempt.pch_create_status == NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED) {
            size_t required = 0;
            if (api.nvrtcGetPCHHeapSizeRequired(raw, &required) == NVRTC_SUCCESS)
                attempt.pch_heap_size_required = required;
        }
    }
    if (attempt.status != NVRTC_SUCCESS) return attempt;

    for (const auto& expression : name_expressions) {
        const char* lowered = nullptr;
        check_nvrtc(api.nvrtcGetLoweredName(raw, expression.c_str(), &lowered),
                    "nvrtcGetLoweredName", object + ", name expression '" + expression + "'");
        attempt.symbols.emplace(expression, lowered ? lowered : expression);
    }
    attempt.code = compiled_code(api, raw, target, object);
    return attempt;
}

InMemoryHeaders in_memory_headers(const std::vector<HeaderBundle>& bundles) {
    InMemoryHeaders headers;
    std::set<std::string_view> taken;
    for (const auto& bundle : bundles) {
        for (const auto& header : bundle.headers()) {
            if (!taken.insert(header.name).second) continue;  // an earlier bundle has it
            headers.names.push_back(header.name.c_str());
            headers.contents.push_back(header.content.c_str());
        }
    }
    return headers;
}

std::vector<std::string> headers_not_found(const std::string& log) {
    std::vector<std::string> names;
    // "cannot open source file "x.h"", or "could not open ..." when no folder is searched.
    constexpr std::string_view marker = "open source file \"";
    for (std::size_t at = log.find(marker); at != std::string::npos; at = log.find(marker, at + 1)) {
        const std::size_t start = at + marker.size();
        const std::size_t end = log.find('"', start);
        if (end == std::string::npos) break;
        std::string name = log.substr(start, end - start);
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(std::move(name));
    }
    return names;
}

void end_failed_time_trace(const std::string& trace_path) noexcept {
    try {
        const auto& api = nvrtc();
        const CompilerCallUnlessExiting under_way;
        if (!under_way.began()) return;
        nvrtcProgram program = nullptr;
        if (api.nvrtcCreateProgram(&program, "", "cudacore_trace_end", 0, nullptr, nullptr) !=
            NVRTC_SUCCESS)
            return;
        const std::string flag = "--fdevice-time-trace=" + trace_path;
        const char* flags[] = {flag.c_str()};
        api.nvrtcCompileProgram(program, 1, flags);
        api.nvrtcDestroyProgram(&program);
    } catch (...) {
    }
}

void set_pch_heap_size(std::size_t size) {
    const auto& api = nvrtc();
    const CompilerCall under_way("nvrtcSetPCHHeapSize");  // none during the exit
    size_t current = 0;
    {
        std::shared_lock lock(pch_heap_mutex());
        if (api.nvrtcGetPCHHeapSize(&current) == NVRTC_SUCCESS && current == size) return;
    }
    std::unique_lock lock(pch_heap_mutex());
    if (api.nvrtcGetPCHHeapSize(&current) == NVRTC_SUCCESS && current == size) return;
    check_nvrtc(api.nvrtcSetPCHHeapSize(size), "nvrtcSetPCHHeapSize",
                "PCH heap of " + std::to_string(size) + " bytes");
}

std::size_t pch_heap_size() {
    // NVRTC's own default (256 MiB), which nothing can have changed before NVRTC is opened: a
    // cache hit asks without opening it.
    constexpr std::size_t nvrtc_default = std::size_t{256} << 20;
    const NvrtcApi* api = nvrtc_if_opened();
    if (!api) return nvrtc_default;
    // Every NVRTC call, not only compiles, is kept out of the exit's NVRTC destructors.
    const CompilerCallUnlessExiting under_way;
    if (!under_way.began()) return nvrtc_default;
    std::shared_lock lock(pch_heap_mutex());
    size_t size = 0;
    if (api->nvrtcGetPCHHeapSize(&size) != NVRTC_SUCCESS) size = nvrtc_default;
    return size;
}

bool log_blames_pch(const std::string& log) {
    bool blamed = false;
    for_each_line(log, [&](std::string_view line) {
        blamed = blamed || (is_error_line(line) && names_pch(line));
    });
    return blamed;
}

std::string pch_error_lines(const std::string& log) {
    std::string out;
    for_each_line(log, [&](std::string_view line) {
        if (is_error_line(line) && names_pch(line)) {
            if (!out.empty()) out += "; ";
            out += line;
        }
    });
    return out;
}

std::vector<std::string> without_pch_flags(const std::vector<std::string>& flags) {
    std::vector<std::string> out;
    for (const auto& flag : flags) {
        const std::string_view f = flag;
        const bool is_pch = f == "--pch" || f == "-pch" || f.starts_with("--create-pch") ||
                            f.starts_with("--use-pch") || f.starts_with("--pch-") ||
                            f.starts_with("--instantiate-templates-in-pch");
        if (!is_pch) out.push_back(flag);
    }
    return out;
}

PchStatus pch_outcome(const NvrtcAttempt& attempt, const ProgramOptions& options) {
    PchStatus status;
    status.heap_size_required = attempt.pch_heap_size_required;
    if (attempt.pch_used) {  // what the code may hold; a PCH also made here is noted by the caller
        status.outcome = PchOutcome::used;
        status.file = attempt.pch_used_file;
        if (attempt.pch_create_status == NVRTC_SUCCESS)
            status.reason = "also made the PCH file '" + attempt.pch_created_file + "'";
        return status;
    }
    status.file = attempt.pch_created_file;
    switch (attempt.pch_create_status) {
        case NVRTC_SUCCESS:
            status.outcome = PchOutcome::created;
            return status;
        case NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED: {
            status.outcome = PchOutcome::failed;
            const std::size_t heap = pch_heap_size();
            status.reason = status_name(attempt.pch_create_status) + ": the PCH needs " +
                            std::to_string(attempt.pch_heap_size_required) +
                            " bytes of PCH heap, which has " + std::to_string(heap);
            if (!options.pch_heap_size && attempt.pch_heap_size_required > heap) {
                set_pch_heap_size(attempt.pch_heap_size_required);
                status.reason += "; grown for later compiles";
            } else if (options.pch_heap_size) {
                status.reason += " (ProgramOptions::pch_heap_size)";
            }
            return status;
        }
        case NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED:
            if (attempt.pch_used) {
                status.outcome = PchOutcome::used;
                return status;
            }
            status.outcome = PchOutcome::not_attempted;
            status.reason = options.pch_messages.value_or(true)
                                ? "NVRTC made no PCH for this program and used none"
                                : "NVRTC made no PCH (pch_messages is off, so NVRTC does not "
                                  "say whether it used one)";
            return status;
        default:
            status.outcome = PchOutcome::failed;
            status.reason = status_name(attempt.pch_create_status);
            if (const std::string lines = pch_error_lines(attempt.log); !lines.empty())
                status.reason += ": " + lines;
            return status;
    }
}

}  // namespace cudacore::detail
