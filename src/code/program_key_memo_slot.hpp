// Where the keys of a Program value are remembered (code/program_key_memo.hpp): an empty slot
// made with the Program and shared by its copies, filled on the first key asked for
// (program_key_memo), so that a Program that is never keyed pays for nothing. Internal.
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
