// Where the program caches keep their memo of a Program value (cache/program_key_memo.hpp): an
// empty slot made with the Program and shared by its copies, which the cache layer fills on its
// first use (program_key_memo in cache/program_key_memo.hpp). The code layer only holds the slot, so no code object
// names a cache symbol (scripts/check-layer-symbols.py). Internal.
#pragma once

#include <atomic>
#include <memory>

namespace cudacore::detail {

class ProgramKeyMemo;

struct ProgramKeyMemoSlot {
    // Set once, by the first use (a compare-and-swap: the thread that sets it then keeps the memo
    // in `owner`; only that thread writes `owner`).
    std::atomic<ProgramKeyMemo*> memo{nullptr};
    std::shared_ptr<ProgramKeyMemo> owner;  // its deleter comes from the cache layer
};

}  // namespace cudacore::detail
