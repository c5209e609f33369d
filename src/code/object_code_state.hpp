// What an ObjectCode shares between its copies: the immutable value, and (made by the runtime
// layer when the code is first loaded) its loading state, held here only as an interface.
#pragma once

#include "cudacore/object_code.hpp"
#include "code/code_bytes.hpp"

#include <atomic>
#include <cstdint>
#include <memory>

namespace cudacore::detail {

// The runtime layer's state for one ObjectCode: its loaded library and the kernels and global
// views taken from it (runtime/library_box.hpp, LazyLibrary). The code layer owns it and
// destroys it first when the value goes, while the code bytes still live (the runtime reads
// from them then), and knows nothing else of it.
struct ObjectCodeLoading {
    ObjectCodeLoading() = default;
    ObjectCodeLoading(const ObjectCodeLoading&) = delete;
    ObjectCodeLoading& operator=(const ObjectCodeLoading&) = delete;
    virtual ~ObjectCodeLoading() = default;
};

struct ObjectCodeState {
    CodeType type = CodeType::cubin;
    std::string name;
    CodeBytes code;
    SymbolMap symbols;
    // std::hash<ObjectCode> of the value, computed on first use; 0: not yet.
    std::atomic<std::uint64_t> value_hash{0};
    bool from_handle = false;  // ObjectCode::from_handle: no bytes, the library given
    // NVRTC made these bytes in this process (Program::compile, not a cache hit): their container
    // is well-formed by construction, so the load does not validate it again. Bytes from
    // anywhere else (files, caches, peers, deserialized values) are validated before the driver
    // sees them.
    bool made_by_nvrtc = false;
    // The stand-ins: what a closed ObjectCode's copies hold (its type and name only, for queries
    // and messages), and what an empty one (moved from or reset) reads.
    bool closed = false;
    bool empty = false;

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
    // The loading state goes first, while the bytes it may read from live.
    ~ObjectCodeState() { delete loading_.load(std::memory_order_acquire); }

    // The loading state if the runtime made it, else nullptr.
    ObjectCodeLoading* loading_if_made() const noexcept {
        return loading_.load(std::memory_order_acquire);
    }
    // Installs `made` as the loading state unless another thread installed one first; returns
    // the one installed (`made` is dropped when it lost). Thread-safe.
    ObjectCodeLoading& install_loading(std::unique_ptr<ObjectCodeLoading> made) const {
        ObjectCodeLoading* expected = nullptr;
        if (loading_.compare_exchange_strong(expected, made.get(), std::memory_order_acq_rel))
            return *made.release();
        return *expected;
    }

private:
    mutable std::atomic<ObjectCodeLoading*> loading_{nullptr};
};

// What the copies of one ObjectCode object share: the value, which close() swaps for a closed
// stand-in so that every copy sees it. Another holder of the same value (another_owner) is
// another owner with its own closed state: what the caches hand out.
struct ObjectCodeHolder {
    std::shared_ptr<ObjectCodeState> state;
};

// The value an empty ObjectCode (moved from or reset) reads: no bytes, `empty` set.
const std::shared_ptr<ObjectCodeState>& empty_object_code_state() noexcept;

// How other layers reach an ObjectCode's state (the public header keeps it private).
struct ObjectCodeAccess {
    static const std::shared_ptr<ObjectCodeState>& state(const ObjectCode& code) noexcept {
        return code.state();
    }
    // A new owner of `code`'s value (its bytes and loaded library), with a closed state of its
    // own: closing either leaves the other open. Throws InvalidArgumentError naming `operation`
    // when `code` is closed or empty.
    static ObjectCode another_owner(const ObjectCode& code, const char* operation);
};

// Throws InvalidArgumentError naming `operation` and the code when `state` is a closed
// ObjectCode's (ObjectCode::close) or an empty one's.
void check_open(const ObjectCodeState& state, const char* operation);

// ObjectCode::from_bytes for bytes a receiver wrote in place (CodeBytes::room_for): taken as
// they are, not copied. Throws InvalidArgumentError when they are empty, as from_bytes does.
ObjectCode object_code_from(CodeType type, CodeBytes code, std::string name, SymbolMap symbols);

// `code` under the name `name`: itself where it has that name, else a new value with a copy of
// its bytes and symbols. A cache entry keeps the name of the program that stored it, and one key
// may serve programs of other names (the same source in another checkout); a hit is returned
// under the asking program's name, as its plain compile names it.
ObjectCode named_as(ObjectCode code, const std::string& name);

}  // namespace cudacore::detail

inline const std::shared_ptr<cudacore::detail::ObjectCodeState>& cudacore::ObjectCode::state() const noexcept {
    return holder_ ? holder_->state : detail::empty_object_code_state();
}
