// What an ObjectCode shares between its copies: the immutable value, and (from the loading
// layer) the lazily loaded library.
#pragma once

#include "cudacore/object_code.hpp"
#include "runtime/library_box.hpp"

#include <atomic>
#include <cstdint>

namespace cudacore::detail {

struct ObjectCodeState {
    CodeType type;
    std::string name;
    std::string code;
    SymbolMap symbols;
    LazyLibrary library;  // loaded on first use (src/object_code_loading.cpp)
    // std::hash<ObjectCode> of the value, computed on first use; 0: not yet.
    std::atomic<std::uint64_t> value_hash{0};
};

}  // namespace cudacore::detail
