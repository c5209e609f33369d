#include "loader/compiler_calls_at_exit.hpp"

#include "cudacore/compile_errors.hpp"

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

// Counts a call under way; false, counting nothing, once the process is exiting.
bool begin_call() noexcept {
    Calls& c = calls();
    const std::lock_guard lock(c.mutex);
    if (c.exiting) return false;
    ++c.under_way;
    return true;
}

void end_call() noexcept {
    Calls& c = calls();
    const std::lock_guard lock(c.mutex);
    if (--c.under_way == 0) c.ended.notify_all();
}

// Registered again at the end of each of the first kRegistrationsAtCompileEnd calls.
void register_again_at_compile_end() noexcept {
    if (compiles_ended.fetch_add(1, std::memory_order_relaxed) < kRegistrationsAtCompileEnd)
        std::atexit(wait_at_exit);
}

}  // namespace

void wait_for_compiler_calls_at_exit() noexcept { std::atexit(wait_at_exit); }

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
