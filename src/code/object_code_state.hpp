// What an ObjectCode shares between its copies: the immutable value, and (from the loading
// layer) the lazily loaded library.
#pragma once

#include "cudacore/object_code.hpp"
#include "runtime/library_box.hpp"

#include <atomic>
#include <memory>

namespace cudacore::detail {

struct ObjectCodeState {
    CodeType type;
    std::string name;
    std::string code;
    SymbolMap symbols;

    ObjectCodeState() = default;
    ObjectCodeState(const ObjectCodeState&) = delete;
    ObjectCodeState& operator=(const ObjectCodeState&) = delete;
    ~ObjectCodeState() { delete lazy_.load(std::memory_order_acquire); }

    // The loading state (src/runtime/object_code_loading.cpp), made on first call: an ObjectCode
    // that is never loaded does not pay for it. Thread-safe.
    LazyLibrary& library() const {
        if (LazyLibrary* made = lazy_.load(std::memory_order_acquire)) [[likely]] return *made;
        auto fresh = std::make_unique<LazyLibrary>();
        LazyLibrary* expected = nullptr;
        if (lazy_.compare_exchange_strong(expected, fresh.get(), std::memory_order_acq_rel))
            return *fresh.release();
        return *expected;  // another thread made it first
    }
    // The loading state if it was made, else nullptr.
    const LazyLibrary* library_if_made() const noexcept {
        return lazy_.load(std::memory_order_acquire);
    }

private:
    mutable std::atomic<LazyLibrary*> lazy_{nullptr};
};

}  // namespace cudacore::detail
