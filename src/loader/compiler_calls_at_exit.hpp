// Compiler calls and the process's exit. NVRTC's exit-time destructors (run by exit() or a return
// from main) free what a compile running on another thread uses: that compile crashes, with
// cudacore or without. So exit waits for the compiles under way: a handler registered after
// NVRTC's own destructors (so that it runs before them) lets them finish (kExitWaitsForCompiles
// at most) and lets none begin; opening NVRTC is such a call too. So that the handler runs before
// every destructor NVRTC registers, the library defines __cxa_atexit (compiler_calls_at_exit.cpp):
// while a call is under way, each registration is followed by the handler's. Internal:
// code/nvrtc_compile.cpp holds a CompilerCall around each compile, and one around each
// program's destruction (destroy_nvrtc_program), which may come later.
#pragma once

#include <chrono>

namespace cudacore::detail {

inline constexpr std::chrono::seconds kExitWaitsForCompiles{60};

// Registers the exit handler (call once NVRTC is open). Thread-safe, never throws.
void wait_for_compiler_calls_at_exit() noexcept;

// NVRTC also makes statics during its first compiles, whose destructors it registers then: the
// handler is registered again from inside compiles (NVRTC's flow callback, which calls this), the
// first kRegistrationsWhileCompiling times, so that it runs before those too. An exit during the
// first compiles is covered in part: a destructor NVRTC registers after the last registration
// runs first. Whether it still is registered again; and the call. Thread-safe, never throw.
inline constexpr int kRegistrationsWhileCompiling = 256;
bool registering_while_compiling() noexcept;
void register_again_while_compiling() noexcept;
// And as each compile ends: NVRTC registers its destructors (thousands) during its first
// compiles, on several threads at once while the callbacks above may have spent their count, and
// more now and then later, so the handler is registered again at the end of each compile, the
// first kRegistrationsAtCompileEnd of them (an entry of 32 bytes in the exit list per compile).
inline constexpr int kRegistrationsAtCompileEnd = 1 << 20;

// One compiler call under way, from construction to destruction. Throws CompilerApiError naming
// `call` when the process is exiting (its exit handler has begun): no compile begins then.
class CompilerCall {
public:
    explicit CompilerCall(const char* call);
    ~CompilerCall();
    CompilerCall(const CompilerCall&) = delete;
    CompilerCall& operator=(const CompilerCall&) = delete;
};

// The same for a call that must not throw (destroying a program, which may outlive the compile
// that made it): began() is false once the process is exiting, and the call is then not made
// (what it would free goes with the process; NVRTC's exit-time destructors may have run).
class CompilerCallUnlessExiting {
public:
    CompilerCallUnlessExiting() noexcept;
    ~CompilerCallUnlessExiting();
    CompilerCallUnlessExiting(const CompilerCallUnlessExiting&) = delete;
    CompilerCallUnlessExiting& operator=(const CompilerCallUnlessExiting&) = delete;
    bool began() const noexcept { return began_; }

private:
    bool began_ = false;
};

}  // namespace cudacore::detail
