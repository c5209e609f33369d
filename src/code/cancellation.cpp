#include "cudacore/cancellation.hpp"

#include <utility>

namespace cudacore {

CancellationToken::CancellationToken(const CancellationToken& other) : state_(other.shared_state()) {}

CancellationToken& CancellationToken::operator=(const CancellationToken& other) {
    state_.store(other.shared_state(), std::memory_order_release);
    return *this;
}

void CancellationToken::cancel() const noexcept {
    shared_state()->cancelled.store(true, std::memory_order_release);
}

CancellationToken CancellationToken::child() const {
    auto made = std::make_shared<State>();
    made->parent = shared_state();
    CancellationToken token;
    token.state_.store(std::move(made), std::memory_order_release);
    return token;
}

bool CancellationToken::operator==(const CancellationToken& other) const noexcept {
    if (this == &other) return true;
    const std::shared_ptr<State> own = state_.load(std::memory_order_acquire);
    return own && own == other.state_.load(std::memory_order_acquire);
}

std::shared_ptr<CancellationToken::State> CancellationToken::shared_state() const {
    std::shared_ptr<State> current = state_.load(std::memory_order_acquire);
    if (current) return current;
    auto made = std::make_shared<State>();
    if (state_.compare_exchange_strong(current, made, std::memory_order_acq_rel)) return made;
    return current;  // another thread made it first
}

CompileCancelled::CompileCancelled(std::string program_name, std::vector<std::string> options, std::string backend)
    : CompileError(std::move(program_name), "error: the compile was cancelled (CancellationToken::cancel)",
                   std::move(options), std::move(backend), NVRTC_ERROR_CANCELLED) {}

}  // namespace cudacore
