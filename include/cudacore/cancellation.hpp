/// @file
/// CancellationToken: gives up on a compile from another thread, and CompileCancelled, what the
/// cancelled compile throws. Waits give up within about 10 ms; inside NVRTC the cancel is seen
/// only at its next flow callback, late in the front end; nvJitLink and libNVVM between steps
/// only (docs/compiling.md, "Cancelling a compile"). For an immediate stop, compile in processes.
///
///     #include <thread>
///     CancellationToken token;
///     std::thread watchdog([token] { std::this_thread::sleep_for(std::chrono::seconds(10)); token.cancel(); });
///     try {
///         ObjectCode code = program.compile(CodeType::cubin, {}, {.cancellation = token});
///     } catch (const CompileCancelled&) {
///     }
///     watchdog.join();
///
/// How soon a cancelled compile returns depends on where it is (docs/compiling.md, "Cancelling a
/// compile"): NVRTC sees it only at its flow callback, after its front end.
#pragma once

#include "cudacore/compile_errors.hpp"

#include <atomic>
#include <memory>
#include <string>
#include <vector>

namespace cudacore {

/// A flag shared by its copies: cancel() on any copy cancels them all, for good. A default token
/// allocates nothing until it is first copied, cancelled or asked for a child (a default
/// CompileOptions costs nothing); then copying is a shared pointer's copy. Every member is
/// thread-safe.
class CancellationToken {
public:
    /// A token not cancelled, with no parent. Allocates nothing; never throws.
    CancellationToken() noexcept = default;
    /// A copy sharing `other`'s flag (made first where `other` had none). Throws std::bad_alloc.
    CancellationToken(const CancellationToken& other);
    /// Shares `other`'s flag from now on. Throws std::bad_alloc.
    CancellationToken& operator=(const CancellationToken& other);
    /// Takes `other`'s flag (`other` is left a token of its own, not cancelled). Never throws.
    CancellationToken(CancellationToken&& other) noexcept
        : state_(other.state_.exchange(nullptr, std::memory_order_acq_rel)) {}
    /// As the move constructor. Never throws.
    CancellationToken& operator=(CancellationToken&& other) noexcept {
        if (this != &other) state_.store(other.state_.exchange(nullptr, std::memory_order_acq_rel), std::memory_order_release);
        return *this;
    }
    ~CancellationToken() = default;

    /// Cancels this token and its copies (and the tokens made by child() from them), for good.
    /// The compiles using it throw CompileCancelled when they next read it (see above: a wait
    /// within about 10 ms, NVRTC not before its front end ends). Thread-safe; never throws (a
    /// token that has no flag yet allocates one: out of memory there, the process ends).
    void cancel() const noexcept;
    /// Whether cancel() was called on this token, a copy of it or a parent of it. Thread-safe;
    /// never throws.
    bool is_cancelled() const noexcept {
        const std::shared_ptr<State> own = state_.load(std::memory_order_acquire);
        for (const State* state = own.get(); state; state = state->parent.get())
            if (state->cancelled.load(std::memory_order_acquire)) return true;
        return false;
    }
    /// A new token cancelled when this one is (or when itself is cancelled): cancelling the child
    /// leaves this token as it was. compile_many uses one to stop the rest of its compiles after
    /// a failure without touching the caller's token. Keeps this token's state alive. Throws
    /// std::bad_alloc.
    CancellationToken child() const;
    /// Whether the two share one flag (one is a copy of the other); two default tokens never
    /// copied are equal only to themselves.
    bool operator==(const CancellationToken& other) const noexcept;

private:
    struct State {
        std::atomic<bool> cancelled{false};
        std::shared_ptr<const State> parent;
    };
    // The flag, made by the first copy, cancel() or child() where none is yet.
    std::shared_ptr<State> shared_state() const;
    mutable std::atomic<std::shared_ptr<State>> state_;
};

/// A compile given up because its CancellationToken was cancelled (its nvrtc_status() is
/// NVRTC_ERROR_CANCELLED). Nothing it did is kept: no code, no cache entry. Catch CompileError for
/// every failed compile, or this first to tell a cancelled compile from a failed one.
class CompileCancelled : public CompileError {
public:
    /// Makes the error for the program `program_name` compiled by `backend` with `options`;
    /// what() says the compile was cancelled.
    CompileCancelled(std::string program_name, std::vector<std::string> options, std::string backend);
};

}  // namespace cudacore
