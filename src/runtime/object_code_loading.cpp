// ObjectCode's runtime side: the library is loaded lazily (cuLibraryLoadData), once, and kernels
// are looked up once per name; ObjectCode's calls that load (load, from_handle, the handles,
// get_kernel) are defined at the end. See library_box.hpp for the loaded library's lifetime.
#include "cudacore/code_inspection.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/kernel.hpp"
#include "cudacore/load_options.hpp"
#include "cudacore/object_code.hpp"
#include "runtime/kernel_box.hpp"
#include "runtime/library_box.hpp"
#include "code/code_validation.hpp"
#include "code/kernel_parameter_count.hpp"
#include "loader/device_queries.hpp"
#include "runtime/code_arch_fit.hpp"
#include "support/box_access.hpp"
#include "support/cudacore_trace.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <optional>
#include <mutex>
#include <shared_mutex>
#include <utility>

namespace cudacore {

namespace detail {
std::string describe_code(CodeType type, std::string_view name, std::size_t size, bool from_handle,
                          CUlibrary library) {
    if (from_handle) {
        char text[64];
        std::snprintf(text, sizeof text, "library %p", static_cast<void*>(library));
        if (name.empty()) return text;
        std::string out = "'";  // appended, not "'" + ...: GCC 12 warns falsely (-Wrestrict) on that
        out.append(name).append("' (").append(text).append(")");
        return out;
    }
    std::string out(to_string(type));
    if (!name.empty()) out += " '" + std::string(name) + "'";
    out += " (" + std::to_string(size) + " bytes)";
    return out;
}

std::string describe_code(const ObjectCodeState& state) {
    const LazyLibrary* lazy = lazy_library_if_made(state);
    return describe_code(state.type, state.name, state.code.size(), state.from_handle,
                         lazy && lazy->library ? lazy->library->handle : nullptr);
}
}  // namespace detail

namespace {

using detail::ArchFit;
using detail::cubin_arch_fit;
using detail::fatbin_arch_fit;
using detail::describe_code;

std::string for_kernel(std::string_view kernel_name) {
    return kernel_name.empty() ? std::string() : ", for kernel '" + std::string(kernel_name) + "'";
}

// "_Z6reduceIfEvPKfPfm" -> "void reduce<float>(float const*, float*, unsigned long)".
std::string demangle(const char* name) {
    int status = 0;
    char* readable = abi::__cxa_demangle(name, nullptr, nullptr, &status);
    std::string out = status == 0 && readable ? readable : name;
    std::free(readable);
    return out;
}

// ", built for sm_120" when the bytes say (only computed for error messages).
std::string built_for(const detail::ObjectCodeState& state) {
    try {
        const CodeInfo info = inspect_code(std::string_view(state.code));
        // A fatbin names its images, even when it holds one arch only.
        std::string archs;
        for (const FatbinEntry& entry : info.entries)
            archs += (archs.empty() ? "" : " ") + entry.kind + ":" + entry.arch;
        if (!archs.empty()) return ", holding " + archs;
        if (!info.arch.empty()) return ", built for " + info.arch;
    } catch (...) {
    }
    return {};
}

[[noreturn]] void refuse_unloadable(const detail::ObjectCodeState& state,
                                    std::string_view kernel_name, const char* why) {
    throw InvalidArgumentError("cannot load " + describe_code(state) + for_kernel(kernel_name) +
                               ": " + why);
}

// Refuses code the driver cannot load: LTO-IR and relocatable code (to be linked first), and
// malformed containers. The driver's loader is not safe against those (a bad table offset
// crashes the process), and the bytes may come from anywhere: a file, a peer, a deserialized
// value whose checksum only says it was not damaged in transit. Bytes NVRTC made in this process
// are well-formed by construction and not walked again (ObjectCodeState::made_by_nvrtc).
void check_loadable(const detail::ObjectCodeState& state, std::string_view kernel_name) {
    switch (state.type) {
        case CodeType::ltoir:
            refuse_unloadable(state, kernel_name,
                              "LTO-IR is not loadable code; link it first "
                              "(Linker({code}).link(CodeType::cubin)) and load the result");
        case CodeType::object:
        case CodeType::library:
            refuse_unloadable(state, kernel_name,
                              "relocatable device code must be linked first "
                              "(Linker({code, ...}).link(CodeType::cubin)) and the result loaded");
        case CodeType::cubin:
        case CodeType::ptx:
        case CodeType::fatbin:
            break;
    }
    if (state.made_by_nvrtc) return;
    try {
        detail::validate_code(state.type, state.code);
    } catch (const InvalidArgumentError& e) {
        refuse_unloadable(state, kernel_name, e.what());
    }
}

// The JIT options of a load with LoadOptions (load_options.hpp), and the buffers its logs go
// into (zeroed: the logs end at the first NUL whatever length the driver writes back).
struct JitOptions {
    std::vector<CUjit_option> keys;
    std::vector<void*> values;
    std::string info_log, error_log;

    void add(CUjit_option key, void* value) {
        keys.push_back(key);
        values.push_back(value);
    }
    template <class T>
    void add_value(CUjit_option key, T value) {
        add(key, reinterpret_cast<void*>(static_cast<std::uintptr_t>(value)));
    }
    explicit JitOptions(const LoadOptions& options) {
        info_log.assign(options.log_bytes, '\0');
        error_log.assign(options.log_bytes, '\0');
        add(CU_JIT_INFO_LOG_BUFFER, info_log.data());
        add_value(CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, options.log_bytes - 1);
        add(CU_JIT_ERROR_LOG_BUFFER, error_log.data());
        add_value(CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, options.log_bytes - 1);
        if (options.optimization_level)
            add_value(CU_JIT_OPTIMIZATION_LEVEL, static_cast<unsigned>(*options.optimization_level));
        if (options.max_registers) add_value(CU_JIT_MAX_REGISTERS, *options.max_registers);
        if (options.threads_per_block) add_value(CU_JIT_THREADS_PER_BLOCK, *options.threads_per_block);
        if (options.cache_mode) add_value(CU_JIT_CACHE_MODE, static_cast<unsigned>(*options.cache_mode));
        if (options.generate_debug_info) add_value(CU_JIT_GENERATE_DEBUG_INFO, 1u);
        if (options.generate_line_info) add_value(CU_JIT_GENERATE_LINE_INFO, 1u);
        if (options.verbose_log) add_value(CU_JIT_LOG_VERBOSE, 1u);
    }
    // The logs as the driver left them.
    LoadReport report() const {
        LoadReport out;
        out.info_log = info_log.c_str();
        out.error_log = error_log.c_str();
        return out;
    }
};

// Loads the library (cuLibraryLoadData); `what` names it in errors, with the driver's JIT log
// for PTX that does not compile (only PTX is given it: the rest of the buffer is left unwritten
// rather than zeroed on every load). With `options` (load_with_options), its JIT options and
// logs, returned in `report`.
template <class What>
CUlibrary load_library_bytes(const detail::ObjectCodeState& state, const What& what,
                             const LoadOptions* options, LoadReport* report) {
    char error_log[4096];
    error_log[0] = '\0';
    error_log[sizeof error_log - 1] = '\0';
    CUjit_option plain_options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* plain_values[] = {error_log, reinterpret_cast<void*>(sizeof error_log - 1)};
    const bool is_ptx = state.type == CodeType::ptx;
    std::optional<JitOptions> jit;
    if (options) jit.emplace(*options);
    CUjit_option* keys = jit ? jit->keys.data() : is_ptx ? plain_options : nullptr;
    void** values = jit ? jit->values.data() : is_ptx ? plain_values : nullptr;
    const unsigned count = jit ? static_cast<unsigned>(jit->keys.size()) : is_ptx ? 2 : 0;
    CUlibrary handle = nullptr;
    const CUresult status = detail::load_library_data(&handle, state.code.data(), keys, values, count);
    const char* log = jit ? jit->error_log.c_str() : error_log;
    if (status != CUDA_SUCCESS) {
        std::string object = what();
        if (log[0]) object += "; JIT log: " + std::string(log);
        detail::throw_driver_error(status, "cuLibraryLoadData", object);
    }
    if (jit && report) *report = jit->report();
    return handle;
}

// The driver may defer loading into a context until first use (lazy loading): loads library
// `handle` into `context` now, so that code that cannot run fails here, once, with `what`. The
// module, then one kernel's function, both force that load; NOT_FOUND only says it is not there
// yet.
template <class What>
void force_context_load(CUlibrary handle, const detail::ContextBox& context, const What& what) {
    const detail::DriverApi& api = detail::driver();
    detail::ContextScope scope(context);
    CUmodule module = nullptr;
    CUresult status = api.cuLibraryGetModule(&module, handle);
    if (status != CUDA_SUCCESS && status != CUDA_ERROR_NOT_FOUND)
        detail::throw_driver_error(status, "cuLibraryGetModule", what());
    unsigned count = 0;
    CUkernel first = nullptr;
    if (api.cuLibraryGetKernelCount(&count, handle) == CUDA_SUCCESS && count > 0 &&
        api.cuLibraryEnumerateKernels(&first, 1, handle) == CUDA_SUCCESS) {
        CUfunction function = nullptr;
        status = api.cuKernelGetFunction(&function, first);
        if (status != CUDA_SUCCESS && status != CUDA_ERROR_NOT_FOUND)
            detail::throw_driver_error(status, "cuKernelGetFunction", what());
    }
}

// The driver's JIT error log of PTX `state` in `context`, or "". Lazy loading JITs PTX at its
// first use in a context, where no log buffer is given: on that failure the PTX is compiled once
// more, eagerly (cuModuleLoadDataEx), for its log only.
std::string ptx_jit_error_log(const detail::ObjectCodeState& state, const detail::ContextBox& context) {
    char log[4096] = {};
    CUjit_option keys[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* values[] = {log, reinterpret_cast<void*>(sizeof log - 1)};
    const detail::DriverApi& api = detail::driver();
    detail::ContextScope scope(context);
    CUmodule module = nullptr;
    if (api.cuModuleLoadDataEx(&module, state.code.data(), 2, keys, values) == CUDA_SUCCESS)
        api.cuModuleUnload(module);
    return log;
}

// The calling thread's current context (null when none) and the ordinal of its device (0 when
// none), as Device::current() asks them, the context kept; a primary context this thread took
// through cudacore needs no second driver call (a cold one costs about half a microsecond on a
// first get_kernel).
std::pair<CUcontext, int> current_context_and_ordinal() {
    const detail::DriverApi& api = detail::driver();
    CUcontext current = nullptr;
    detail::check(api.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
    if (!current) return {nullptr, 0};
    if (const std::optional<int> ordinal = detail::known_primary_context_ordinal(current))
        return {current, *ordinal};
    CUdevice device = 0;
    detail::check(api.cuCtxGetDevice(&device), "cuCtxGetDevice");
    return {current, detail::ordinal_of(device).value_or(0)};
}

// The context a library is loaded into, which its globals and parameter queries then use: the
// calling thread's current context `current` where Context::create made it (the library holds
// it, as its other objects do), else the primary context of device `ordinal` (the current one).
// A foreign context is not held: its owner may destroy it while the code lives.
std::shared_ptr<detail::ContextBox> load_context(CUcontext current, int ordinal) {
    std::shared_ptr<detail::ContextBox> primary = detail::primary_context(ordinal);
    if (current && current != primary->handle)
        if (std::shared_ptr<detail::ContextBox> created = detail::find_created_context(current))
            return created;
    return primary;
}

std::shared_ptr<detail::LibraryBox> load_now(const detail::ObjectCodeState& state,
                                             std::string_view kernel_name,
                                             const LoadOptions* options = nullptr,
                                             LoadReport* report = nullptr) {
    const detail::CudacoreRange range(tracing::CudacoreCategory::load, [&] { return "load " + describe_code(state); },
                                      state.code.size());
    check_loadable(state, kernel_name);
    try {
        detail::driver();
    } catch (const NoDriverError& e) {
        // Same type, with what was being loaded.
        throw NoDriverError(e.library(), e.searched(), e.env_var(),
                            e.reason() + " (needed to load " + describe_code(state) +
                                for_kernel(kernel_name) + ")");
    }
    const auto [current, current_ordinal] = current_context_and_ordinal();
    const Device device(current_ordinal);
    // For error messages only: what was loaded (and the arch its bytes were built for), for
    // which kernel, on which device.
    auto what = [&] {
        return describe_code(state) + built_for(state) + for_kernel(kernel_name) +
               ", on device " + std::to_string(device.ordinal()) + " (" + device.arch() + ")";
    };

    // Code that cannot run here is refused from its bytes (no load); code built for exactly
    // this device needs no forced load to know it loads. Everything else (PTX, older minors,
    // unreadable headers) is loaded into the context now, so the driver says it here, once.
    ArchFit fit = ArchFit::ask_driver;
    if (state.type == CodeType::cubin || state.type == CodeType::fatbin) {
        const ComputeCapability cc = device.compute_capability();
        fit = state.type == CodeType::cubin ? cubin_arch_fit(state.code, cc.major, cc.minor)
                                            : fatbin_arch_fit(state.code, cc.major, cc.minor);
        if (fit == ArchFit::cannot_run) {
            detail::throw_driver_error(CUDA_ERROR_NO_BINARY_FOR_GPU, "cuLibraryLoadData",
                                       what() + " (refused from the code's own header: not loaded)");
        }
    }
    const CUlibrary handle = load_library_bytes(state, what, options, report);
    auto box = std::make_shared<detail::LibraryBox>();
    box->handle = handle;
    box->code_type = state.type;
    box->code_name = state.name;
    box->code_size = state.code.size();
    auto context = load_context(current, device.ordinal());
    if (fit != ArchFit::runs) {
        try {
            force_context_load(box->handle, *context, what);
        } catch (const DriverError& e) {
            const std::string log = state.type == CodeType::ptx ? ptx_jit_error_log(state, *context) : "";
            if (log.empty()) throw;
            detail::throw_driver_error(e.status(), e.call().c_str(), what() + "; JIT log: " + log);
        }
    }
    box->loaded_context = std::move(context);
    return box;
}

// Runs `load` for `lazy` unless it ran before (in any thread): its outcome, the library or the
// exception, is kept; true when this call ran it. A mutex rather than std::call_once, whose glibc
// form ends every first run with a futex wake system call, waiters or not (about a microsecond
// of a first get_kernel).
template <class Load>
bool load_once(detail::LazyLibrary& lazy, Load&& load) {
    if (lazy.attempted.load(std::memory_order_acquire)) return false;
    const std::lock_guard lock(lazy.load_mutex);
    if (lazy.attempted.load(std::memory_order_relaxed)) return false;
    try {
        lazy.library = load();
    } catch (...) {
        lazy.failure = std::current_exception();
    }
    lazy.attempted.store(true, std::memory_order_release);
    return true;
}

}  // namespace

// The loaded library, loading it on first call; the first outcome is kept and repeated.
const std::shared_ptr<detail::LibraryBox>& detail::loaded_library(detail::ObjectCodeState& state,
                                                                  std::string_view kernel_name) {
    detail::LazyLibrary& lazy = detail::lazy_library(state);
    load_once(lazy, [&] { return load_now(state, kernel_name); });
    if (lazy.failure) std::rethrow_exception(lazy.failure);
    return lazy.library;
}

bool detail::load_first_with(detail::ObjectCodeState& state, const LoadOptions& options,
                             LoadReport& report) {
    detail::LazyLibrary& lazy = detail::lazy_library(state);
    const bool loaded_here = load_once(lazy, [&] { return load_now(state, {}, &options, &report); });
    if (lazy.failure) std::rethrow_exception(lazy.failure);
    return loaded_here;
}

std::string detail::kernel_list(const detail::ObjectCodeState& state, CUlibrary library) {
    const detail::DriverApi& api = detail::driver();
    unsigned count = 0;
    if (api.cuLibraryGetKernelCount(&count, library) != CUDA_SUCCESS) return "(unknown)";
    std::vector<CUkernel> kernels(count);
    if (count && api.cuLibraryEnumerateKernels(kernels.data(), count, library) != CUDA_SUCCESS)
        return "(unknown)";
    std::string out;
    for (CUkernel kernel : kernels) {
        const char* name = nullptr;
        if (api.cuKernelGetName(&name, kernel) != CUDA_SUCCESS || !name) continue;
        std::string entry;
        for (const auto& [expression, lowered] : state.symbols)
            if (lowered == name) entry = expression + " = ";
        entry += name;
        if (entry.find(" = ") == std::string::npos && name[0] == '_' && name[1] == 'Z')
            entry += " (" + demangle(name) + ")";
        out += out.empty() ? entry : ", " + entry;
    }
    return out.empty() ? "no kernels" : out;
}

detail::LazyLibrary::~LazyLibrary() {
    kernels.for_each(
        [](const Kernel& kernel) { detail::box_of(kernel)->settle_parameter_count(); });
}

// ObjectCode's loading calls (object_code.hpp), defined here because they load a CUlibrary and
// make Kernels.
void ObjectCode::load() const {
    detail::check_open(*state(), "ObjectCode::load");
    detail::loaded_library(*state(), {});
}

ObjectCode ObjectCode::from_handle(CUlibrary library, const FromHandleOptions& options) {
    if (!library) throw InvalidArgumentError("ObjectCode::from_handle: null CUlibrary");
    detail::driver();  // NoDriverError without a driver, as for any runtime object
    auto state = std::make_shared<detail::ObjectCodeState>();
    state->type = CodeType::cubin;
    state->name = options.name;
    state->from_handle = true;
    auto box = std::make_shared<detail::LibraryBox>();
    box->handle = library;
    box->owned = options.take_ownership;
    box->from_handle = true;
    box->code_name = options.name;
    detail::LazyLibrary& lazy = detail::lazy_library(*state);
    lazy.library = std::move(box);
    // Already loaded: later uses skip the lazy load (its mutex is never taken).
    lazy.attempted.store(true, std::memory_order_release);
    return ObjectCode(std::move(state));
}

CUlibrary ObjectCode::library_handle() const {
    detail::check_open(*state(), "ObjectCode::library_handle");
    return detail::loaded_library(*state(), {})->handle;
}

bool ObjectCode::is_loaded() const noexcept {
    const detail::LazyLibrary* lazy = detail::lazy_library_if_made(*state());
    return lazy && lazy->attempted.load(std::memory_order_acquire) && lazy->library != nullptr;
}

std::optional<CUlibrary> ObjectCode::handle() const noexcept {
    if (!is_loaded()) return std::nullopt;
    return detail::lazy_library_if_made(*state())->library->handle;
}

Kernel ObjectCode::get_kernel(std::string_view name) const {
    // A name looked up before is a lock-free read; everything else is out of line, so this path
    // saves no registers and sets up no frame for the loading code it does not run.
    if (const detail::LazyLibrary* lazy = detail::lazy_library_if_made(*state())) [[likely]] {
        if (const Kernel* found = lazy->kernels.find(name)) [[likely]] return *found;
    }
    return first_kernel_lookup(name);
}

[[gnu::noinline]] Kernel ObjectCode::first_kernel_lookup(std::string_view name) const {
    detail::check_open(*state(), "ObjectCode::get_kernel");
    detail::LazyLibrary& lazy = detail::lazy_library(*state());
    if (const Kernel* found = lazy.kernels.find(name)) return *found;  // another thread's meanwhile
    const std::shared_ptr<detail::LibraryBox>& library = detail::loaded_library(*state(), name);

    const std::string lowered = lowered_name(name);
    CUkernel handle = nullptr;
    CUresult status = detail::driver().cuLibraryGetKernel(&handle, library->handle, lowered.c_str());
    if (status == CUDA_ERROR_NOT_FOUND) {
        throw InvalidArgumentError(
            "get_kernel: no kernel '" + std::string(name) + "'" +
            (lowered != name ? " (lowered: '" + lowered + "')" : std::string()) + " in " +
            detail::describe_code(*state()) + "; it holds: " + detail::kernel_list(*state(), library->handle) +
            (state()->symbols.empty() ? std::string()
                                     : " (templates are found by the name expressions given "
                                       "to Program::compile)"));
    }
    detail::check(status, "cuLibraryGetKernel", [&] {
        return "kernel '" + std::string(name) + "' (" + detail::describe_code(*state()) + ")";
    });

    // The description and the parameter count are made when first needed (kernel_box.hpp); the
    // count is read from these bytes while they live (settle_kernel_parameter_counts).
    auto box = detail::make_kernel_box(handle, std::string(name), lowered, {}, library);
    box->count_parameters_from(state()->type, state()->code);
    // Another thread may have made it meanwhile: everyone gets the first one.
    return lazy.kernels.insert(name, detail::BoxAccess::make<Kernel>(std::move(box)));
}

}  // namespace cudacore
