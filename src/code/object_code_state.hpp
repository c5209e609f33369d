// What an ObjectCode shares between its copies: the immutable value, and (from the loading
// layer) the lazily loaded library.
#pragma once

#include "cudacore/object_code.hpp"
#include "code/code_bytes.hpp"
#include "runtime/library_box.hpp"

#include <atomic>
#include <cstdint>
#include <memory>

namespace cudacore::detail {

// Reads the parameter count of each kernel taken from `lazy` that was not asked yet
// (src/runtime/object_code_loading.cpp): its ObjectCode's bytes are about to go.
void settle_kernel_parameter_counts(LazyLibrary& lazy) noexcept;

struct ObjectCodeState {
    CodeType type = CodeType::cubin;
    std::string name;
    CodeBytes code;
    SymbolMap symbols;
    // std::hash<ObjectCode> of the value, computed on first use; 0: not yet.
    std::atomic<std::uint64_t> value_hash{0};
    bool from_handle = false;  // ObjectCode::from_handle: no bytes, the library given

    // User-provided, so that std::allocate_shared does not zero the whole object before
    // constructing it (value-initialisation of a defaulted constructor): every member has its
    // initialiser.
    ObjectCodeState() {}
    // Moved in at construction: cheaper than assigning each over a default member.
    ObjectCodeState(CodeType type, std::string name, SymbolMap symbols) noexcept
        : type(type), name(std::move(name)), symbols(std::move(symbols)) {}
    ObjectCodeState(CodeType type, std::string_view name, const SymbolMap& symbols)
        : type(type), name(name), symbols(symbols) {}
    ObjectCodeState(const ObjectCodeState&) = delete;
    ObjectCodeState& operator=(const ObjectCodeState&) = delete;
    ~ObjectCodeState() {
        LazyLibrary* lazy = lazy_.load(std::memory_order_acquire);
        if (!lazy) return;
        settle_kernel_parameter_counts(*lazy);  // while the bytes they are read from live
        delete lazy;
    }

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

// ObjectCode::from_bytes for bytes a receiver wrote in place (CodeBytes::room_for): taken as
// they are, not copied. Throws InvalidArgumentError when they are empty, as from_bytes does.
ObjectCode object_code_from(CodeType type, CodeBytes code, std::string name, SymbolMap symbols);

// The loaded library of `state`, loading it on first call (src/runtime/object_code_loading.cpp);
// the first outcome is kept and repeated. `kernel_name` only names what asked, in errors.
const std::shared_ptr<LibraryBox>& loaded_library(ObjectCodeState& state,
                                                  std::string_view kernel_name);
// "cubin 'saxpy' (5120 bytes)", or the library handle of a from_handle ObjectCode.
std::string describe_code(const ObjectCodeState& state);
// The same from its parts: `library` names code handed in as a library (from_handle).
std::string describe_code(CodeType type, std::string_view name, std::size_t size, bool from_handle,
                          CUlibrary library);

}  // namespace cudacore::detail
