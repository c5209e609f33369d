// What an ObjectCode shares between its copies: the immutable value, and (from the loading
// layer) the lazily loaded library.
#pragma once

#include "cudacore/object_code.hpp"
#include "runtime/library_box.hpp"

namespace cudacore::detail {

struct ObjectCodeState {
    CodeType type;
    std::string name;
    std::string code;
    SymbolMap symbols;
    LazyLibrary library;  // loaded on first use (src/object_code_loading.cpp)
};

}  // namespace cudacore::detail
