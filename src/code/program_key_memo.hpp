// The memo behind the cache keys of one Program value (program.hpp, "Cache keys"): what cache_key
// and compile_cached computed once for the value, reused by later calls, which re-check only what
// can change between calls. Made with the Program, shared by its copies. Internal.
//
// What is remembered, and what a later call still reads:
//   - the source key, cache_key(program, target, names), by target, name expressions and
//     KeyContext (what the key reads from outside the Program value, read again at every call);
//   - the first code key (code_keys.hpp) under each source key, where the program's snapshot
//     read nothing outside the toolkit (so the key follows from the value alone).
// Each list holds the last few entries (a Program keyed many ways is re-keyed, never wrong).
#pragma once

#include "code/compile_request.hpp"
#include "code/program_key_memo_slot.hpp"
#include "cudacore/cache_key.hpp"
#include "cudacore/program.hpp"

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cudacore::detail {

// What cache_key reads from outside the Program value (everything else it reads is the value's
// or fixed for the process: library versions, the backend, the toolkit folders of a $CUDA_HOME).
// Cheap to read: no hashing, no file read.
struct KeyContext {
    std::string arch;          // the current device's arch, when options().arch is unset
    const std::string* cuda_home = nullptr;  // $CUDA_HOME (cuda_home_value()), when the toolkit's
                                             // folders are on the include path
    std::string debug_folder;  // where the source is written, for a program with debug information
    unsigned compilers = 0;    // compiler_identity_generation(): keys name the compilers opened
    bool operator==(const KeyContext&) const = default;
};

// The context of `program` now. Throws what resolving an unset arch throws.
KeyContext key_context(const Program& program);

class ProgramKeyMemo {
public:
    // The source key remembered for these arguments in this context, or nullopt.
    std::optional<CacheKey> source_key(CodeType target, const std::vector<std::string>& names,
                                       const KeyContext& context) const;
    void remember_source_key(CodeType target, const std::vector<std::string>& names,
                             const KeyContext& context, const CacheKey& key);

    // Remembers the first code key under `source_key`.
    void remember_first_key(const CacheKey& source_key, const CacheKey& key);

    // The first code key of these arguments in this context, where both keys are remembered:
    // a hit's one question (one lock, no hashing).
    std::optional<CacheKey> lookup_key(CodeType target, const std::vector<std::string>& names,
                                       const KeyContext& context) const;

private:
    static constexpr std::size_t kept = 16;  // entries per list, the oldest dropped first
    struct SourceKey {
        CodeType target;
        std::vector<std::string> names;
        KeyContext context;
        CacheKey key;
        bool is_for(CodeType t, const std::vector<std::string>& n, const KeyContext& c) const {
            return target == t && names == n && context == c;
        }
    };
    mutable std::mutex mutex_;
    std::vector<SourceKey> source_keys_;
    std::vector<std::pair<CacheKey, CacheKey>> first_keys_;
};

// The memo of a Program (null for a moved-from one), made by the first call on the value or a
// copy of it (the Program holds only its empty slot, code/program_key_memo_slot.hpp). Thread-safe;
// throws only std::bad_alloc (on the first call).
ProgramKeyMemo* make_program_key_memo(ProgramKeyMemoSlot& slot);
inline ProgramKeyMemo* program_key_memo(const Program& program) {
    ProgramKeyMemoSlot* slot = ProgramInternals::key_memo_slot(program);
    if (!slot) return nullptr;
    if (ProgramKeyMemo* made = slot->memo.load(std::memory_order_acquire)) [[likely]]
        return made;
    return make_program_key_memo(*slot);
}

}  // namespace cudacore::detail
