#include "cudacore/linker.hpp"

#include "cudacore/errors.hpp"
#include "code/object_code_state.hpp"
#include "cudacore/owning_handle.hpp"
#include "errors/closed_object.hpp"
#include "code/closable_slot.hpp"
#include "cudacore/program_options.hpp"
#include "code/code_validation.hpp"
#include "code/driver_link_context.hpp"
#include "code/nvjitlink_run.hpp"
#include "code/ptxas_report.hpp"
#include "loader/compiler_apis.hpp"
#include "support/child_process.hpp"
#include "support/cudacore_trace.hpp"
#include "loader/driver_api.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace cudacore {

namespace {

std::string input_name(const ObjectCode& input, std::size_t index) {
    return input.name().empty() ? "input " + std::to_string(index) : input.name();
}

void append_line(std::string& log, const std::string& line) {
    if (!log.empty() && log.back() != '\n') log += '\n';
    log += line;
}

// -verbose, or ptxas's -v among its options: the caller asked for the info log.
bool is_verbose(const LinkerOptions& options) {
    return options.verbose.value_or(false) || detail::asks_ptxas_report(options.ptxas_options);
}

// The log a LinkError carries: the error log, and for a verbose link the info log too (the
// caller asked for it, failure or not).
std::string failure_log(const LinkerOptions& options, const std::string& info,
                        const std::string& error) {
    std::string log = error;
    if (is_verbose(options)) {
        // Some nvJitLink builds stop before writing anything to the info log (for example
        // NVJITLINK_ERROR_INTERNAL under ptxas -v): say so rather than leave the section out.
        append_line(log, "info log:");
        append_line(log, info.empty() ? "(the linker wrote no info log)" : info);
    }
    return log;
}

// ---- nvJitLink ----------------------------------------------------------------------------

// A line of a linker's log or output that reports an error: "error   : ...", "nvlink error :",
// "ERROR: ...", "LLVM ERROR: ...", "fatal ...", or one ptxas marks "@E@".
bool is_error_line(std::string_view line) {
    const auto start = line.find_first_not_of(" \t");
    if (start == std::string_view::npos) return false;
    line.remove_prefix(start);
    if (line.starts_with("@E@")) return true;
    for (const std::string_view tool : {"ptxas", "nvlink", "nvJitLink", "LLVM"}) {
        if (line.starts_with(tool) && line.size() > tool.size() && line[tool.size()] == ' ') {
            line.remove_prefix(tool.size() + 1);
            line.remove_prefix(std::min(line.size(), line.find_first_not_of(' ')));
            break;
        }
    }
    for (const std::string_view word : {"error", "ERROR", "Error", "fatal", "FATAL"}) {
        if (line.starts_with(word) && (line.size() == word.size() || line[word.size()] == ' ' ||
                                       line[word.size()] == ':'))
            return true;
    }
    return false;
}

bool has_error_line(std::string_view text) {
    while (!text.empty()) {
        const std::size_t end = text.find('\n');
        if (is_error_line(text.substr(0, end))) return true;
        if (end == std::string_view::npos) break;
        text.remove_prefix(end + 1);
    }
    return false;
}

// ptxas's severity markers ("@E@error : ...", "@W@", "@I@") taken off each line.
std::string without_markers(std::string_view text) {
    std::string out;
    while (!text.empty()) {
        const std::size_t end = text.find('\n');
        std::string_view line = text.substr(0, end);
        if (line.size() >= 3 && line[0] == '@' && line[2] == '@') line.remove_prefix(3);
        out.append(line);
        if (end == std::string_view::npos) break;
        out.push_back('\n');
        text.remove_prefix(end + 1);
    }
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
}

// ---- driver linker (cuLink*) --------------------------------------------------------------

// The driver linker's input type; none for LTO-IR, which only nvJitLink links.
std::optional<CUjitInputType> driver_input_type(CodeType type) {
    switch (type) {
        case CodeType::ptx: return CU_JIT_INPUT_PTX;
        case CodeType::cubin: return CU_JIT_INPUT_CUBIN;
        case CodeType::fatbin: return CU_JIT_INPUT_FATBINARY;
        case CodeType::object: return CU_JIT_INPUT_OBJECT;
        case CodeType::library: return CU_JIT_INPUT_LIBRARY;
        case CodeType::ltoir: break;
    }
    return std::nullopt;
}

// The CU_JIT options the driver linker is given, with a readable form for flags().
struct DriverJitOptions {
    std::vector<CUjit_option> keys;
    std::vector<void*> values;
    std::vector<std::string> described;

    void add(CUjit_option key, const char* name, std::uintptr_t value, std::string shown) {
        keys.push_back(key);
        values.push_back(reinterpret_cast<void*>(value));
        described.push_back(std::string(name) + "=" + shown);
    }
};

// The one place LinkerOptions become driver JIT options. Options the driver linker cannot honour
// are refused rather than silently dropped.
DriverJitOptions driver_jit_options(const LinkerOptions& o) {
    // Why the driver's linker is in use, for the refusal message.
    const char* why = o.backend == LinkerBackend::driver
                          ? "the driver's linker (LinkerOptions::backend = driver)"
                          : "nvJitLink is not available and the driver's linker";
    std::vector<std::string> unsupported;
    auto refuse = [&](bool set, const char* field) {
        if (set) unsupported.emplace_back(field);
    };
    refuse(o.link_time_optimization.value_or(false), "link_time_optimization");
    refuse(o.time.value_or(false), "time");
    refuse(o.ptx.value_or(false), "ptx");
    refuse(o.ftz.has_value(), "ftz");
    refuse(o.prec_div.has_value(), "prec_div");
    refuse(o.prec_sqrt.has_value(), "prec_sqrt");
    refuse(o.fma.has_value(), "fma");
    refuse(!o.kernels_used.empty(), "kernels_used");
    refuse(!o.variables_used.empty(), "variables_used");
    refuse(o.optimize_unused_variables.has_value(), "optimize_unused_variables");
    refuse(!o.ptxas_options.empty(), "ptxas_options");
    refuse(o.split_compile.has_value(), "split_compile");
    refuse(o.split_compile_extended.has_value(), "split_compile_extended");
    refuse(o.no_cache.has_value(), "no_cache");
    refuse(!o.extra_flags.empty(), "extra_flags");
    if (!unsupported.empty()) {
        std::string list;
        for (const auto& field : unsupported) list += (list.empty() ? "" : ", ") + field;
        throw InvalidArgumentError("linker '" + o.name + "': " + why +
                                   " does not support these nvJitLink-only options: " + list);
    }

    DriverJitOptions jit;
    const std::string arch = resolve_arch(o);  // sm_90, sm_90a, compute_100f...
    const std::string digits = arch.substr(arch.find('_') + 1);
    std::uintptr_t target = std::stoul(digits);
    if (digits.back() == 'a') target += CU_COMPUTE_ACCELERATED_TARGET_BASE;
    if (digits.back() == 'f') target += CU_COMPUTE_FAMILY_TARGET_BASE;
    jit.add(CU_JIT_TARGET, "CU_JIT_TARGET", target, arch);
    if (o.max_register_count) {
        jit.add(CU_JIT_MAX_REGISTERS, "CU_JIT_MAX_REGISTERS",
                static_cast<std::uintptr_t>(*o.max_register_count),
                std::to_string(*o.max_register_count));
    }
    if (o.optimization_level) {
        jit.add(CU_JIT_OPTIMIZATION_LEVEL, "CU_JIT_OPTIMIZATION_LEVEL",
                static_cast<std::uintptr_t>(*o.optimization_level),
                std::to_string(*o.optimization_level));
    }
    if (o.debug) jit.add(CU_JIT_GENERATE_DEBUG_INFO, "CU_JIT_GENERATE_DEBUG_INFO", *o.debug, std::to_string(*o.debug));
    if (o.lineinfo) jit.add(CU_JIT_GENERATE_LINE_INFO, "CU_JIT_GENERATE_LINE_INFO", *o.lineinfo, std::to_string(*o.lineinfo));
    if (o.verbose) jit.add(CU_JIT_LOG_VERBOSE, "CU_JIT_LOG_VERBOSE", *o.verbose, std::to_string(*o.verbose));
    return jit;
}

}  // namespace

// The state of one link, kept after link() so that handle() stays valid. The names (and, for the
// driver, the NUL-terminated input copies) live as long as the handle that may point at them.
struct Linker::State {
    nvJitLinkHandle nvjitlink_handle = nullptr;
    CUlinkState driver_state = nullptr;
    std::shared_ptr<const void> context;  // the driver link's context outlives its state
    std::vector<std::string> names;
    std::vector<std::string> buffers;
    std::string info_log, error_log;  // the driver's log buffers (given to it at cuLinkCreate)

    State() = default;
    State(const State&) = delete;
    State& operator=(const State&) = delete;
    ~State() {
        // Release errors (a driver already shut down at exit) are ignored.
        try {
            if (nvjitlink_handle) detail::nvjitlink().destroy(&nvjitlink_handle);
            if (driver_state) detail::driver().cuLinkDestroy(driver_state);
        } catch (...) {
        }
    }
};

// What the copies share: closed or not, and the last link's state.
struct Linker::Shared : detail::ClosableSlot<std::shared_ptr<Linker::State>> {};

namespace {
// Room in the link state for the names and copies of `inputs` inputs, and the buffers the
// driver's logs go to (given through `jit`; their sizes come back through the same options).
// A template: Linker::State is private to Linker.
template <class LinkState>
void prepare_link_state(LinkState& state, DriverJitOptions& jit, std::size_t inputs) {
    state.names.reserve(inputs);
    state.buffers.reserve(inputs);
    constexpr std::size_t kLogSize = 64 * 1024;
    state.info_log.assign(kLogSize, '\0');
    state.error_log.assign(kLogSize, '\0');
    jit.keys.insert(jit.keys.end(), {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                                     CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES});
    jit.values.insert(jit.values.end(),
                      {state.info_log.data(), reinterpret_cast<void*>(kLogSize), state.error_log.data(),
                       reinterpret_cast<void*>(kLogSize)});
}

// The symbol map of linked code: every input's (name expression -> lowered name), so that the
// linked code finds a kernel by the name expression its input was compiled with. A name
// expression two inputs map to different lowered names is left out: neither is the one meant.
SymbolMap linked_symbols(const std::vector<ObjectCode>& inputs) {
    SymbolMap merged;
    std::set<std::string> ambiguous;
    for (const ObjectCode& input : inputs) {
        for (const auto& [expression, lowered] : input.symbol_map()) {
            const auto [at, added] = merged.emplace(expression, lowered);
            if (!added && at->second != lowered) ambiguous.insert(expression);
        }
    }
    for (const std::string& expression : ambiguous) merged.erase(expression);
    return merged;
}

}  // namespace

LinkerBackend Linker::which_backend() noexcept {
    if (detail::nvjitlink_available()) return LinkerBackend::nvjitlink;
    if (detail::driver_available()) return LinkerBackend::driver;
    return LinkerBackend::nvjitlink;
}

LinkerBackend Linker::backend_kind() const noexcept {
    return backend_ == to_string(LinkerBackend::driver) ? LinkerBackend::driver : LinkerBackend::nvjitlink;
}

void Linker::close() noexcept {
    if (shared_) shared_->close();
    inputs_.clear();
}

bool Linker::is_closed() const noexcept { return shared_ && shared_->closed(); }

void Linker::reset() noexcept {
    shared_.reset();
    inputs_.clear();
}

void Linker::check_open(const char* operation) const {
    if (!shared_) [[unlikely]]
        detail::throw_moved_from_error(operation, owning_names<Linker>.type, owning_names<Linker>.holds);
    if (shared_->closed()) [[unlikely]]
        detail::throw_closed_object_error(operation, ("linker '" + options_.name + "'").c_str(), owning_names<Linker>.type);
}

LinkerHandle Linker::handle() const noexcept {
    const std::shared_ptr<State> state = shared_ ? shared_->held() : nullptr;
    if (!state) return std::monostate{};
    if (state->driver_state) return state->driver_state;
    return state->nvjitlink_handle;
}

Linker::Linker(std::vector<ObjectCode> inputs, LinkerOptions options)
    : inputs_(std::move(inputs)), options_(std::move(options)), shared_(std::make_shared<Shared>()) {
    if (inputs_.empty()) {
        throw InvalidArgumentError("Linker: no inputs given to linker '" + options_.name + "'");
    }
    // Neither nvJitLink nor the driver's linker is safe against malformed containers (a bad
    // table offset crashes them): every input is checked first, whatever its origin.
    for (std::size_t i = 0; i < inputs_.size(); ++i) {
        detail::check_open(*detail::ObjectCodeAccess::state(inputs_[i]), "Linker (an input)");
        detail::validate_link_input(inputs_[i], i, options_.name);
    }
    // As asked; automatic: nvJitLink when it loads, the driver's linker only as a fallback. With
    // neither, link() reports nvJitLink's loader error (which paths were tried, what to set).
    LinkerBackend chosen = options_.backend;
    if (options_.isolated) {
        // The worker runs nvJitLink; the driver's linker needs this process's context.
        if (chosen == LinkerBackend::driver) {
            throw InvalidArgumentError("linker '" + options_.name + "': an isolated link "
                                       "(LinkerOptions::isolated) runs nvJitLink in a worker "
                                       "process; the driver's linker cannot be isolated");
        }
        chosen = LinkerBackend::nvjitlink;
    }
    if (chosen == LinkerBackend::automatic) chosen = which_backend();
    backend_ = to_string(chosen);
}

std::vector<std::string> Linker::flags() const {
    check_open("Linker::flags");
    if (backend_kind() == LinkerBackend::driver) return driver_jit_options(options_).described;
    return nvjitlink_flags(options_);
}

ObjectCode Linker::link(CodeType target) {
    check_open("Linker::link");
    const detail::CudacoreRange range(tracing::CudacoreCategory::link, [&] { return "link " + options_.name; });
    if (target != CodeType::cubin && target != CodeType::ptx) {
        throw InvalidArgumentError("linker '" + options_.name + "': links to cubin or ptx, not " +
                                   std::string(to_string(target)));
    }
    info_log_.clear();
    error_log_.clear();
    if (backend_kind() == LinkerBackend::driver) {
        if (target != CodeType::cubin) {
            throw InvalidArgumentError("linker '" + options_.name +
                                       "': the driver's linker only produces cubin, not " +
                                       std::string(to_string(target)));
        }
        // Checked before the driver is needed, so these refusals need no GPU.
        driver_jit_options(options_);
        for (std::size_t i = 0; i < inputs_.size(); ++i) {
            if (!driver_input_type(inputs_[i].code_type())) {
                throw InvalidArgumentError("linker '" + options_.name + "': the driver's linker "
                                           "cannot take LTO-IR input '" +
                                           input_name(inputs_[i], i) + "' (link it with nvJitLink)");
            }
        }
        return link_with_driver();
    }
    if (target == CodeType::ptx) {
        // nvJitLink makes PTX only from LTO-IR, by link-time optimization; say so here rather
        // than leave it to nvJitLink's bare NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS.
        for (std::size_t i = 0; i < inputs_.size(); ++i) {
            if (inputs_[i].code_type() != CodeType::ltoir) {
                throw InvalidArgumentError(
                    "linker '" + options_.name + "': PTX output needs LTO-IR input (nvJitLink "
                    "emits PTX only from link-time optimization), but input '" +
                    input_name(inputs_[i], i) + "' is " + std::string(to_string(inputs_[i].code_type())) +
                    ": link to cubin, or compile the sources to LTO-IR");
            }
        }
        if (!options_.link_time_optimization.value_or(true)) {
            throw InvalidArgumentError("linker '" + options_.name + "': PTX output needs link-time "
                                       "optimization, but link_time_optimization is false");
        }
    }
    return link_with_nvjitlink(target);
}

ObjectCode Linker::link_with_nvjitlink(CodeType target) {
    const std::vector<std::string> flags = nvjitlink_flags(options_, target == CodeType::ptx);
    std::string object = "linker '" + options_.name + "', flags:";
    for (const auto& flag : flags) object += " " + flag;

    // nvJitLink keeps the name pointers until it is destroyed (it prints them in its logs at
    // nvJitLinkComplete), so the names live in the state box beside the handle.
    shared_->keep(nullptr);
    auto state = std::make_shared<State>();
    std::vector<std::string>& names = state->names;
    names.reserve(inputs_.size());
    for (std::size_t i = 0; i < inputs_.size(); ++i) names.push_back(input_name(inputs_[i], i));

    detail::NvJitLinkRun run;
    if (options_.isolated) {
        // The flags are checked here (nvJitLinkCreate reads no input), so that a refused flag is
        // the same CompilerApiError as in an in-process link; the inputs go to the worker.
        nvJitLinkHandle checked = detail::create_nvjitlink(flags, object);
        detail::nvjitlink().destroy(&checked);
        const auto worker = detail::find_helper_program("cudacore-link-worker", "CUDACORE_LINK_WORKER",
                                                        options_.worker_program);
        run = detail::run_nvjitlink_isolated(worker, inputs_, names, flags, target,
                                             options_.isolated_timeout);
    } else {
        state->nvjitlink_handle = detail::create_nvjitlink(flags, object);
        shared_->keep(state);  // handle() shows it from here on, also when the link fails
        run = detail::run_nvjitlink(state->nvjitlink_handle, inputs_, names, target, object);
    }
    info_log_ = std::move(run.info_log);
    error_log_ = std::move(run.error_log);
    const std::string console = without_markers(run.console);

    // A link that reports success with errors in its logs or output (nvJitLink 13: "Multiple
    // definition of 'f'") has failed: its code is not what the inputs asked for.
    if (run.linked && (has_error_line(info_log_) || has_error_line(error_log_) || has_error_line(console)))
        run.failure = "nvJitLinkComplete returned NVJITLINK_SUCCESS, but the linker reported errors";
    if (!run.linked || !run.failure.empty()) {
        std::string log = failure_log(options_, info_log_, error_log_);
        // Errors found in the info log belong in the log even when it was not asked for.
        if (run.linked && !is_verbose(options_) && has_error_line(info_log_)) append_line(log, info_log_);
        if (!console.empty()) append_line(log, console);
        append_line(log, run.failure);
        throw LinkError(options_.name, std::move(log), flags, backend_, std::move(run.failure));
    }
    // Printed by the worker's linker, which in this process would have reached the terminal.
    if (!console.empty()) append_line(info_log_, console);
    return ObjectCode::from_bytes(target, std::move(run.code), options_.name, linked_symbols(inputs_));
}

ObjectCode Linker::link_with_driver() {
    DriverJitOptions jit = driver_jit_options(options_);

    // cuLink* needs a current context: use the current device's primary context for the call.
    const detail::DriverLinkContext context;
    const auto& api = detail::driver();
    const std::string object = "linker '" + options_.name + "' (driver)";

    // Names, input copies and log buffers live as long as the link state (the state box): the
    // driver may keep pointers to them.
    shared_->keep(nullptr);
    auto state = std::make_shared<State>();
    state->context = context.held();
    std::vector<std::string>& names = state->names;
    std::vector<std::string>& buffers = state->buffers;
    prepare_link_state(*state, jit, inputs_.size());
    const std::string& info = state->info_log;
    const std::string& error = state->error_log;
    auto take_logs = [&] {
        info_log_ = info.c_str();
        error_log_ = error.c_str();
    };

    detail::check(api.cuLinkCreate(static_cast<unsigned>(jit.keys.size()), jit.keys.data(),
                                   jit.values.data(), &state->driver_state),
                  "cuLinkCreate", object);
    CUlinkState raw = state->driver_state;
    shared_->keep(state);

    auto fail = [&](CUresult status, const std::string& call) {
        take_logs();
        std::string log = failure_log(options_, info_log_, error_log_);
        std::string failure = call + " failed: " + driver_status_name(status) + ": " +
                              driver_status_text(status);
        append_line(log, failure);
        throw LinkError(options_.name, std::move(log), jit.described, backend_, std::move(failure));
    };

    for (std::size_t i = 0; i < inputs_.size(); ++i) {
        const ObjectCode& input = inputs_[i];
        const std::string& name = names.emplace_back(input_name(input, i));
        const CUjitInputType type = *driver_input_type(input.code_type());
        // PTX must be NUL-terminated for the driver; ObjectCode's bytes need not be.
        std::string& data = buffers.emplace_back(input.code());
        if (type == CU_JIT_INPUT_PTX) data.push_back('\0');
        const CUresult status = api.cuLinkAddData(raw, type, data.data(), data.size(), name.c_str(),
                                                  0, nullptr, nullptr);
        if (status != CUDA_SUCCESS) {
            fail(status, "cuLinkAddData(" + std::string(to_string(input.code_type())) + " '" + name +
                             "', " + std::to_string(input.size()) + " bytes)");
        }
    }
    void* cubin = nullptr;
    size_t size = 0;
    if (const CUresult status = api.cuLinkComplete(raw, &cubin, &size); status != CUDA_SUCCESS)
        fail(status, "cuLinkComplete");
    take_logs();
    // The cubin belongs to the link state: copy it (the state lives on for handle()).
    return ObjectCode::from_cubin(std::string(static_cast<const char*>(cubin), size), options_.name, linked_symbols(inputs_));
}

}  // namespace cudacore
