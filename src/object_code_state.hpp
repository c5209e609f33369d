// What an ObjectCode shares between its copies: the immutable value, and (from the loading
// layer) the lazily loaded library.
#pragma once

#include "cudacore/object_code.hpp"

namespace cudacore::detail {

struct ObjectCodeState {
    CodeType type;
    std::string name;
    std::string code;
    SymbolMap symbols;
};

}  // namespace cudacore::detail
