#include "loader/compiler_calls_at_exit.hpp"

#include "cudacore/compile_errors.hpp"

#include <dlfcn.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>

namespace cudacore::detail {
namespace {

struct Calls {
    std::mutex mutex;
    std::condition_variable ended;
    int under_way = 0;
    bool exiting = false;
};

// How often the wait was registered again from inside a compile (NVRTC's flow callback).
std::atomic<int> registered_while_compiling{0};
// Calls under way, read without the lock by __cxa_atexit below.
std::atomic<int> calls_under_way{0};
// Compiles ended.
std::atomic<int> compiles_ended{0};

// Leaked: used by the exit handler and by calls that end during exit.
Calls& calls() {
    static auto* instance = new Calls;
    return *instance;
}

void wait_at_exit() noexcept {
    Calls& c = calls();
    std::unique_lock lock(c.mutex);
    c.exiting = true;
    c.ended.wait_for(lock, kExitWaitsForCompiles, [&] { return c.under_way == 0; });
}

void wait_at_exit_of(void*) noexcept { wait_at_exit(); }

// Counts a call under way; false, counting nothing, once the process is exiting.
bool begin_call() noexcept {
    Calls& c = calls();
    const std::lock_guard lock(c.mutex);
    if (c.exiting) return false;
    ++c.under_way;
    calls_under_way.fetch_add(1, std::memory_order_acq_rel);
    return true;
}

void end_call() noexcept {
    Calls& c = calls();
    const std::lock_guard lock(c.mutex);
    calls_under_way.fetch_sub(1, std::memory_order_acq_rel);
    if (--c.under_way == 0) c.ended.notify_all();
}

// Registered again at the end of each of the first kRegistrationsAtCompileEnd calls.
void register_again_at_compile_end() noexcept {
    if (compiles_ended.fetch_add(1, std::memory_order_relaxed) < kRegistrationsAtCompileEnd)
        std::atexit(wait_at_exit);
}

}  // namespace

void wait_for_compiler_calls_at_exit() noexcept { std::atexit(wait_at_exit); }

}  // namespace cudacore::detail

// ThreadSanitizer's start-up registers through __cxa_atexit before it can run instrumented code:
// its builds keep the C library's alone (and the registrations of compiler_calls_at_exit.hpp).
#if defined(__SANITIZE_THREAD__)
#define CUDACORE_REGISTERS_AT_EXIT_HANDLERS 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CUDACORE_REGISTERS_AT_EXIT_HANDLERS 0
#endif
#endif
#ifndef CUDACORE_REGISTERS_AT_EXIT_HANDLERS
#define CUDACORE_REGISTERS_AT_EXIT_HANDLERS 1
#endif

#if CUDACORE_REGISTERS_AT_EXIT_HANDLERS
// The C++ runtime's registration of an exit-time destructor, in front of the C library's: the
// dynamic loader finds this one first wherever libcudacore is in the global scope (linked by the
// program, not opened with RTLD_LOCAL; a sanitizer's own comes first and calls this one). While
// a compiler call is under way (NVRTC being opened, a compile), every destructor registered (
// NVRTC's, thousands, during its initialisation and first compiles) is followed by the exit's
// wait, so that the wait runs before it: an exit then never runs NVRTC's destructors under a
// compile or under NVRTC's own initialisation (which crashed or hung the process).
extern "C" int __cxa_atexit(void (*destructor)(void*), void* object, void* dso_handle) noexcept {
    using Register = int (*)(void (*)(void*), void*, void*);
    // No static with a guard: this runs before any library's initialisation (the C++ runtime's
    // own registrations come first).
    static std::atomic<Register> next{nullptr};
    Register call = next.load(std::memory_order_acquire);
    if (call == nullptr) {
        call = reinterpret_cast<Register>(::dlsym(RTLD_NEXT, "__cxa_atexit"));
        if (call == nullptr) return -1;
        next.store(call, std::memory_order_release);
    }
    const int registered = call(destructor, object, dso_handle);
    if (registered == 0 && cudacore::detail::calls_under_way.load(std::memory_order_acquire) > 0)
        call(cudacore::detail::wait_at_exit_of, nullptr, nullptr);  // the library is never unloaded
    return registered;
}
#endif

namespace cudacore::detail {

bool registering_while_compiling() noexcept {
    return registered_while_compiling.load(std::memory_order_relaxed) < kRegistrationsWhileCompiling;
}

void register_again_while_compiling() noexcept {
    if (registering_while_compiling() &&
        registered_while_compiling.fetch_add(1, std::memory_order_relaxed) < kRegistrationsWhileCompiling)
        std::atexit(wait_at_exit);
}

CompilerCall::CompilerCall(const char* call) {
    if (!begin_call()) throw CompilerApiError(call, -1, "the process is exiting: no compile begins", "");
}

CompilerCall::~CompilerCall() {
    end_call();
    // After the compile: what NVRTC registered during it comes before this.
    register_again_at_compile_end();
}

CompilerCallUnlessExiting::CompilerCallUnlessExiting() noexcept : began_(begin_call()) {}

CompilerCallUnlessExiting::~CompilerCallUnlessExiting() {
    if (began_) end_call();
}

}  // namespace cudacore::detail
