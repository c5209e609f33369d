// Compiler calls and the process's exit. NVRTC's exit-time destructors (run by exit() or a return
// from main) free what a compile running on another thread uses: that compile crashes, with
// cudacore or without. So exit waits for the compiles under way: a handler registered after
// NVRTC's own destructors (so that it runs before them) lets them finish (kExitWaitsForCompiles
// at most) and lets none begin. An exit while another thread is still opening NVRTC (inside the
// dynamic loader, its first use) is not covered: the loader's own lock decides that. Internal:
// code/nvrtc_compile.cpp holds a CompilerCall around each NVRTC program's life.
#pragma once

#include <chrono>

namespace cudacore::detail {

inline constexpr std::chrono::seconds kExitWaitsForCompiles{60};

// Registers the exit handler (call once NVRTC is open). Thread-safe, never throws.
void wait_for_compiler_calls_at_exit() noexcept;

// NVRTC also makes statics during its first compiles, whose destructors it registers then: the
// handler is registered again from inside compiles (NVRTC's flow callback, which calls this) and
// as each ends, the first kRegistrationsWhileCompiling times, so that it runs before those too.
// An exit during the first compiles is covered in part: a destructor NVRTC registers after the
// last registration runs first. Whether it still is registered again; and the call. Thread-safe,
// never throw.
inline constexpr int kRegistrationsWhileCompiling = 256;
bool registering_while_compiling() noexcept;
void register_again_while_compiling() noexcept;

// One compiler call under way, from construction to destruction. Throws CompilerApiError naming
// `call` when the process is exiting (its exit handler has begun): no compile begins then.
class CompilerCall {
public:
    explicit CompilerCall(const char* call);
    ~CompilerCall();
    CompilerCall(const CompilerCall&) = delete;
    CompilerCall& operator=(const CompilerCall&) = delete;
};

}  // namespace cudacore::detail
