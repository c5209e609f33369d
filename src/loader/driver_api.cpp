#include "loader/driver_api.hpp"

#include "cudacore/errors.hpp"
#include "errors/driver_log.hpp"
#include "errors/driver_status_lookup.hpp"
#include "loader/dynamic_library.hpp"

#include <atomic>
#include <exception>
#include <mutex>

namespace cudacore::detail {

std::atomic<const DriverApi*> loaded_driver{nullptr};

namespace {

constexpr const char* kDriverVariable = "CUDACORE_LIBCUDA_PATH";

struct DriverState {
    DriverApi api;
    std::exception_ptr failure;
};

using GetProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t,
                                    CUdriverProcAddressQueryResult*);

// The driver's version (cuDriverGetVersion), 0 when it cannot say.
int driver_version_of(GetProcAddress get_proc) {
    void* slot = nullptr;
    CUdriverProcAddressQueryResult found{};
    int version = 0;
    if (get_proc("cuDriverGetVersion", &slot, 2020, CU_GET_PROC_ADDRESS_DEFAULT, &found) == CUDA_SUCCESS &&
        found == CU_GET_PROC_ADDRESS_SUCCESS && slot)
        reinterpret_cast<CUresult (*)(int*)>(slot)(&version);
    return version;
}

// Fills `api` with the driver's functions from its cuGetProcAddress; returns the names of the
// required ones it lacks, comma-separated ("" when none). An entry point newer than the driver
// (`driver_version`) is not asked for: the driver answers such a request with a failed call
// (CUDA_ERROR_INVALID_VALUE), which compute-sanitizer reports.
std::string resolve_driver_functions(GetProcAddress get_proc, int driver_version, DriverApi& api) {
    std::string missing;
    auto resolve = [&](const char* name, int version, void** slot) {
        CUdriverProcAddressQueryResult found{};
        if (version > driver_version ||
            get_proc(name, slot, version, CU_GET_PROC_ADDRESS_DEFAULT, &found) != CUDA_SUCCESS ||
            found != CU_GET_PROC_ADDRESS_SUCCESS) {
            *slot = nullptr;
            missing += missing.empty() ? name : std::string(", ") + name;
        }
    };
#define CUDACORE_DRIVER_FUNCTION(name, version) \
    resolve(#name, version, reinterpret_cast<void**>(&api.name));
#include "loader/driver_functions.inc"
#undef CUDACORE_DRIVER_FUNCTION

    auto resolve_optional = [&](const char* name, int version, void** slot) {
        CUdriverProcAddressQueryResult found{};
        if (version > driver_version ||
            get_proc(name, slot, version, CU_GET_PROC_ADDRESS_DEFAULT, &found) != CUDA_SUCCESS ||
            found != CU_GET_PROC_ADDRESS_SUCCESS)
            *slot = nullptr;
    };
#define CUDACORE_DRIVER_OPTIONAL_FUNCTION(name, version) \
    resolve_optional(#name, version, reinterpret_cast<void**>(&api.name));
#include "loader/driver_optional_functions.inc"
#undef CUDACORE_DRIVER_OPTIONAL_FUNCTION
    {
        // Optional: a driver without it is still usable (callers fall back).
        CUdriverProcAddressQueryResult found{};
        void* slot = nullptr;
        if (driver_version >= 13020 &&
            get_proc("cuKernelGetParamCount", &slot, 13020, CU_GET_PROC_ADDRESS_DEFAULT,
                     &found) == CUDA_SUCCESS &&
            found == CU_GET_PROC_ADDRESS_SUCCESS)
            api.cuKernelGetParamCount =
                reinterpret_cast<decltype(api.cuKernelGetParamCount)>(slot);
    }
    return missing;
}

DriverState load_driver() {
    DriverState state;
    try {
        LibrarySearch search{"the CUDA driver (libcuda.so.1)", kDriverVariable,
                             {"libcuda.so.1", "libcuda.so"}};
        OpenedLibrary library;
        try {
            library = open_library(search);
        } catch (const LoaderError& e) {
            // Same message, but typed: no driver is an expected condition callers test for.
            throw NoDriverError(e.library(), e.searched(), e.env_var(), e.reason());
        }
        state.api.path = library.path;
        auto get_proc = reinterpret_cast<GetProcAddress>(find_symbol(library, "cuGetProcAddress_v2"));
        if (!get_proc) {
            throw NoDriverError(search.library, {library.path}, kDriverVariable,
                                "the driver has no cuGetProcAddress_v2; a driver for CUDA " +
                                    std::to_string(CUDA_VERSION / 1000) + " or newer is needed");
        }
        const int version = driver_version_of(get_proc);
        const std::string missing = resolve_driver_functions(get_proc, version, state.api);
        state.api.driver_version = version;
        if (version < CUDA_VERSION || !missing.empty()) {
            throw NoDriverError(
                search.library, {library.path}, kDriverVariable,
                "driver version " + std::to_string(version / 1000) + "." +
                    std::to_string(version % 1000 / 10) + " is older than CUDA " +
                    std::to_string(CUDA_VERSION / 1000) + "." +
                    std::to_string(CUDA_VERSION % 1000 / 10) + ", which cudacore was built for" +
                    (missing.empty() ? "" : " (missing entry points: " + missing + ")"));
        }
        CUresult status = state.api.cuInit(0);
        if (status != CUDA_SUCCESS) {
            const char* name = nullptr;
            const char* text = nullptr;
            state.api.cuGetErrorName(status, &name);
            state.api.cuGetErrorString(status, &text);
            throw NoDriverError(search.library, {library.path}, kDriverVariable,
                                std::string("cuInit failed: ") + (name ? name : "?") + ": " +
                                    (text ? text : "?"));
        }
    } catch (...) {
        state.failure = std::current_exception();
    }
    return state;
}

// What driver_status_name and driver_status_text ask once the driver is open: the driver that
// driver_if_loaded() gives at the time of the call.
const char* loaded_driver_status(CUresult status, bool text) noexcept {
    const DriverApi* api = driver_if_loaded();
    if (!api) return nullptr;
    const char* out = nullptr;
    const CUresult found = text ? api->cuGetErrorString(status, &out) : api->cuGetErrorName(status, &out);
    return found == CUDA_SUCCESS ? out : nullptr;
}

const DriverState& driver_state() {
    // A function-local static: initialised once, thread-safely, never destroyed before users
    // that were created after it (and it holds only plain data, so its destruction is trivial).
    static const DriverState* state = [] {
        auto* s = new DriverState(load_driver());  // intentionally leaked: valid during exit
        if (!s->failure) {
            // Once per process, for its whole life (never unregistered: errors may come from
            // static destructors). A driver without error logs, or refusing the callback, gives
            // errors without log lines, as before.
            if (s->api.cuLogsRegisterCallback)
                s->api.cuLogsRegisterCallback(driver_log_callback, nullptr, nullptr);
            loaded_driver.store(&s->api, std::memory_order_release);
            set_driver_status_lookup(loaded_driver_status);
        }
        return s;
    }();
    return *state;
}

}  // namespace

const DriverApi& open_driver() {
    const DriverState& state = driver_state();
    if (state.failure) std::rethrow_exception(state.failure);
    return state.api;
}


bool driver_available() noexcept {
    try {
        driver();
        return true;
    } catch (...) {
        return false;
    }
}

void throw_driver_error(CUresult status, const char* call, const std::string& object) {
    // Only here, on failure, is the thread's log read (and emptied for the next failure).
    throw DriverError(status, call, object, take_driver_log(call));
}

void throw_driver_error(CUresult status, const char* call, const std::string& object,
                        std::vector<std::string> driver_log) {
    throw DriverError(status, call, object, std::move(driver_log));
}

}  // namespace cudacore::detail
