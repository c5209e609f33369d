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
    bool from_handle = false;  // ObjectCode::from_handle: no bytes, the library given
};

// The loaded library of `state`, loading it on first call (src/runtime/object_code_loading.cpp);
// the first outcome is kept and repeated. `kernel_name` only names what asked, in errors.
const std::shared_ptr<LibraryBox>& loaded_library(ObjectCodeState& state,
                                                  std::string_view kernel_name);
// "cubin 'saxpy' (5120 bytes)", or the library handle of a from_handle ObjectCode.
std::string describe_code(const ObjectCodeState& state);

}  // namespace cudacore::detail
