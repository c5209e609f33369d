// Where the program caches keep their memo of a Program value (cache/program_key_memo.hpp): an
// empty slot made with the Program and shared by its copies, which the cache layer fills on its
// first use (program_key_memo in cache/program_key_memo.hpp). The code layer only holds the slot, so no code object
// names a cache symbol (scripts/check-layer-symbols.py). Internal.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>

namespace cudacore::detail {

class ProgramKeyMemo;

struct ProgramKeyMemoSlot {
    std::atomic<ProgramKeyMemo*> memo{nullptr};  // set (release) once `owner` holds it
    std::once_flag made;                          // the first use makes the memo, once
    std::shared_ptr<ProgramKeyMemo> owner;        // its deleter comes from the cache layer
};

}  // namespace cudacore::detail
