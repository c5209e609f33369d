// The memo the program caches keep for each Program value (cache/program_key_memo.hpp): made with
// the Program and shared by its copies. Declared here and defined by the cache layer, which fills
// it (as current_device_arch is defined by the runtime): the code layer only holds it. Internal.
#pragma once

#include <memory>

namespace cudacore::detail {

class ProgramKeyMemo;

// A new, empty memo. Throws only std::bad_alloc.
std::shared_ptr<ProgramKeyMemo> make_program_key_memo();

}  // namespace cudacore::detail
