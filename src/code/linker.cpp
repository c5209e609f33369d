#include "cudacore/linker.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/program_options.hpp"
#include "code/code_validation.hpp"
#include "loader/compiler_apis.hpp"
#include "loader/driver_api.hpp"
#include "runtime/runtime_handles.hpp"

#include <cstdint>
#include <memory>

namespace cudacore {

namespace {

constexpr const char* kNvJitLink = "nvJitLink";
constexpr const char* kDriver = "driver";

std::string input_name(const ObjectCode& input, std::size_t index) {
    return input.name().empty() ? "input " + std::to_string(index) : input.name();
}

void append_line(std::string& log, const std::string& line) {
    if (!log.empty() && log.back() != '\n') log += '\n';
    log += line;
}

// -verbose, or ptxas's -v among its options: the caller asked for the info log.
bool is_verbose(const LinkerOptions& options) {
    if (options.verbose.value_or(false)) return true;
    for (const auto& option : options.ptxas_options)
        if (option == "-v" || option == "--verbose") return true;
    return false;
}

// The log a LinkError carries: the error log, and for a verbose link the info log too (the
// caller asked for it, failure or not).
std::string failure_log(const LinkerOptions& options, const std::string& info,
                        const std::string& error) {
    std::string log = error;
    if (is_verbose(options) && !info.empty()) {
        append_line(log, "info log:");
        append_line(log, info);
    }
    return log;
}

// ---- nvJitLink ----------------------------------------------------------------------------

nvJitLinkInputType nvjitlink_input_type(CodeType type) {
    switch (type) {
        case CodeType::cubin: return NVJITLINK_INPUT_CUBIN;
        case CodeType::ptx: return NVJITLINK_INPUT_PTX;
        case CodeType::ltoir: return NVJITLINK_INPUT_LTOIR;
        case CodeType::fatbin: return NVJITLINK_INPUT_FATBIN;
        case CodeType::object: return NVJITLINK_INPUT_OBJECT;
        case CodeType::library: return NVJITLINK_INPUT_LIBRARY;
    }
    return NVJITLINK_INPUT_ANY;
}

std::string nvjitlink_log(const detail::NvJitLinkApi& api, nvJitLinkHandle handle, bool error) {
    size_t size = 0;
    auto status = error ? api.get_error_log_size(handle, &size) : api.get_info_log_size(handle, &size);
    if (status != NVJITLINK_SUCCESS || size <= 1) return {};
    std::string log(size, '\0');
    status = error ? api.get_error_log(handle, log.data()) : api.get_info_log(handle, log.data());
    if (status != NVJITLINK_SUCCESS) return {};
    log.resize(size - 1);
    return log;
}

// ---- driver linker (cuLink*) --------------------------------------------------------------

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
    std::vector<std::string> unsupported;
    auto refuse = [&](bool set, const char* field) {
        if (set) unsupported.emplace_back(field);
    };
    refuse(o.link_time_optimization.value_or(false), "link_time_optimization");
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
        throw InvalidArgumentError("linker '" + o.name +
                                   "': nvJitLink is not available and the driver's linker does "
                                   "not support: " + list);
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

struct DriverLinkDeleter {
    void operator()(CUlinkState state) const noexcept { detail::driver().cuLinkDestroy(state); }
};

}  // namespace

Linker::Linker(std::vector<ObjectCode> inputs, LinkerOptions options)
    : inputs_(std::move(inputs)), options_(std::move(options)) {
    if (inputs_.empty()) {
        throw InvalidArgumentError("Linker: no inputs given to linker '" + options_.name + "'");
    }
    // Neither nvJitLink nor the driver's linker is safe against malformed containers (a bad
    // table offset crashes them): every input is checked first, whatever its origin.
    for (std::size_t i = 0; i < inputs_.size(); ++i) detail::validate_link_input(inputs_[i], i, options_.name);
    // nvJitLink when it loads; the driver's linker only as a fallback. With neither, link()
    // reports nvJitLink's loader error (it says which paths were tried and what to set).
    backend_ = (!detail::nvjitlink_available() && detail::driver_available()) ? kDriver : kNvJitLink;
}

std::vector<std::string> Linker::flags() const {
    if (backend_ == kDriver) return driver_jit_options(options_).described;
    return nvjitlink_flags(options_);
}

ObjectCode Linker::link(CodeType target) {
    if (target != CodeType::cubin && target != CodeType::ptx) {
        throw InvalidArgumentError("linker '" + options_.name + "': links to cubin or ptx, not " +
                                   std::string(to_string(target)));
    }
    info_log_.clear();
    error_log_.clear();
    if (backend_ == kDriver) {
        if (target != CodeType::cubin) {
            throw InvalidArgumentError("linker '" + options_.name +
                                       "': nvJitLink is not available and the driver's linker "
                                       "only produces cubin");
        }
        return link_with_driver();
    }
    return link_with_nvjitlink(target);
}

ObjectCode Linker::link_with_nvjitlink(CodeType target) {
    const auto& api = detail::nvjitlink();
    const std::vector<std::string> flags = nvjitlink_flags(options_, target == CodeType::ptx);
    std::vector<const char*> argv;
    for (const auto& flag : flags) argv.push_back(flag.c_str());
    std::string object = "linker '" + options_.name + "', flags:";
    for (const auto& flag : flags) object += " " + flag;

    // nvJitLink keeps the name pointers until it is destroyed (it prints them in its logs at
    // nvJitLinkComplete), so the names must outlive the handle (declared before it).
    std::vector<std::string> names;
    names.reserve(inputs_.size());
    for (std::size_t i = 0; i < inputs_.size(); ++i) names.push_back(input_name(inputs_[i], i));

    nvJitLinkHandle raw = nullptr;
    detail::check_nvjitlink(api.create(&raw, static_cast<uint32_t>(argv.size()), argv.data()),
                            "nvJitLinkCreate", object);
    auto destroy = [&api](nvJitLinkHandle* handle) { api.destroy(handle); };
    std::unique_ptr<nvJitLinkHandle, decltype(destroy)> guard(&raw, destroy);

    auto fail = [&](nvJitLinkResult status, const std::string& call) {
        info_log_ = nvjitlink_log(api, raw, false);
        error_log_ = nvjitlink_log(api, raw, true);
        std::string log = failure_log(options_, info_log_, error_log_);
        append_line(log, call + " failed: " + detail::nvjitlink_status_name(status));
        throw LinkError(options_.name, std::move(log), flags, kNvJitLink);
    };

    for (std::size_t i = 0; i < inputs_.size(); ++i) {
        const ObjectCode& input = inputs_[i];
        const std::string& name = names[i];
        const auto status = api.add_data(raw, nvjitlink_input_type(input.code_type()),
                                         input.code().data(), input.size(), name.c_str());
        if (status != NVJITLINK_SUCCESS) {
            fail(status, "nvJitLinkAddData(" + std::string(to_string(input.code_type())) + " '" +
                             name + "', " + std::to_string(input.size()) + " bytes)");
        }
    }
    if (const auto status = api.complete(raw); status != NVJITLINK_SUCCESS)
        fail(status, "nvJitLinkComplete");
    info_log_ = nvjitlink_log(api, raw, false);
    error_log_ = nvjitlink_log(api, raw, true);

    size_t size = 0;
    std::string code;
    if (target == CodeType::ptx) {
        detail::check_nvjitlink(api.get_linked_ptx_size(raw, &size), "nvJitLinkGetLinkedPtxSize", object);
        code.resize(size);
        detail::check_nvjitlink(api.get_linked_ptx(raw, code.data()), "nvJitLinkGetLinkedPtx", object);
        while (!code.empty() && code.back() == '\0') code.pop_back();
    } else {
        detail::check_nvjitlink(api.get_linked_cubin_size(raw, &size), "nvJitLinkGetLinkedCubinSize", object);
        code.resize(size);
        detail::check_nvjitlink(api.get_linked_cubin(raw, code.data()), "nvJitLinkGetLinkedCubin", object);
    }
    return ObjectCode::from_bytes(target, std::move(code), options_.name);
}

ObjectCode Linker::link_with_driver() {
    DriverJitOptions jit = driver_jit_options(options_);
    // The driver's logs go to buffers we own; their sizes come back through the same options.
    constexpr std::size_t kLogSize = 64 * 1024;
    std::string info(kLogSize, '\0'), error(kLogSize, '\0');
    jit.keys.insert(jit.keys.end(), {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                                     CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES});
    jit.values.insert(jit.values.end(),
                      {info.data(), reinterpret_cast<void*>(kLogSize), error.data(),
                       reinterpret_cast<void*>(kLogSize)});

    // cuLink* needs a current context: use the current device's primary context for the call.
    const Context context = Device::current().context();
    detail::ContextScope scope(*context.box());
    const auto& api = detail::driver();
    const std::string object = "linker '" + options_.name + "' (driver)";

    auto take_logs = [&] {
        info_log_ = info.c_str();
        error_log_ = error.c_str();
    };

    // Names and input copies live until the link state is gone: the driver may keep pointers
    // to them until cuLinkComplete (declared before the state, so destroyed after it).
    std::vector<std::string> names, buffers;
    names.reserve(inputs_.size());
    buffers.reserve(inputs_.size());

    CUlinkState raw = nullptr;
    detail::check(api.cuLinkCreate(static_cast<unsigned>(jit.keys.size()), jit.keys.data(),
                                   jit.values.data(), &raw),
                  "cuLinkCreate", object);
    std::unique_ptr<std::remove_pointer_t<CUlinkState>, DriverLinkDeleter> state(raw);

    auto fail = [&](CUresult status, const std::string& call) {
        take_logs();
        std::string log = failure_log(options_, info_log_, error_log_);
        append_line(log, call + " failed: " + driver_status_name(status) + ": " +
                             driver_status_text(status));
        throw LinkError(options_.name, std::move(log), jit.described, kDriver);
    };

    for (std::size_t i = 0; i < inputs_.size(); ++i) {
        const ObjectCode& input = inputs_[i];
        const std::string& name = names.emplace_back(input_name(input, i));
        CUjitInputType type;
        switch (input.code_type()) {
            case CodeType::ptx: type = CU_JIT_INPUT_PTX; break;
            case CodeType::cubin: type = CU_JIT_INPUT_CUBIN; break;
            case CodeType::fatbin: type = CU_JIT_INPUT_FATBINARY; break;
            case CodeType::object: type = CU_JIT_INPUT_OBJECT; break;
            case CodeType::library: type = CU_JIT_INPUT_LIBRARY; break;
            default:
                throw InvalidArgumentError(object + ": nvJitLink is not available and the driver's "
                                           "linker cannot take LTO-IR input '" + name + "'");
        }
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
    // The cubin belongs to the link state: copy it before the state is destroyed.
    return ObjectCode::from_cubin(std::string(static_cast<const char*>(cubin), size), options_.name);
}

}  // namespace cudacore
