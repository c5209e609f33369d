#include "code/program_key_memo.hpp"

#include "code/debug_source.hpp"
#include "cudacore/program_options.hpp"
#include "code/compiler_identity.hpp"
#include "code/cuda_home.hpp"

#include <algorithm>

namespace cudacore::detail {
namespace {

// Appends `entry`, dropping the oldest entry once `limit` are held.
template <class Entry>
void keep_last(std::vector<Entry>& entries, Entry entry, std::size_t limit) {
    if (entries.size() >= limit) entries.erase(entries.begin());
    entries.push_back(std::move(entry));
}

}  // namespace

ProgramKeyMemo* make_program_key_memo(ProgramKeyMemoSlot& slot) {
    // A compare-and-swap rather than std::call_once: glibc's once makes a system call (a futex
    // wake) every time it runs, so once per new Program. Two threads racing to make the first
    // memo both make one; the one set is kept, the other dropped unused.
    auto made = std::make_shared<ProgramKeyMemo>();
    ProgramKeyMemo* known = nullptr;
    if (!slot.memo.compare_exchange_strong(known, made.get(), std::memory_order_acq_rel,
                                           std::memory_order_acquire))
        return known;
    ProgramKeyMemo* memo = made.get();
    slot.owner = std::move(made);  // only the thread that set `memo` writes `owner`
    return memo;
}

KeyContext key_context(const Program& program) {
    KeyContext context;
    context.compilers = compiler_identity_generation();
    const ProgramOptions& options = program.options();
    if (!options.arch)
        context.arch = current_device_arch(("program '" + options.name + "'").c_str());
    if (program.source_type() == SourceType::cxx) {
        // toolkit_include_dirs() finds the toolkit's folders once per $CUDA_HOME value.
        if (options.toolkit_include_path && options.header_bundles.empty()) {
            context.cuda_home = cuda_home_value();
        }
        // The debug source's path is this folder, the source's digest and the name.
        if (wants_debug_source(options))
            context.debug_folder = debug_source_folder(options).string();
    }
    return context;
}

std::optional<CacheKey> ProgramKeyMemo::source_key(CodeType target,
                                                   const std::vector<std::string>& names,
                                                   const KeyContext& context) const {
    std::lock_guard lock(mutex_);
    for (const SourceKey& known : source_keys_)
        if (known.is_for(target, names, context)) return known.key;
    return std::nullopt;
}

void ProgramKeyMemo::remember_source_key(CodeType target, const std::vector<std::string>& names,
                                         const KeyContext& context, const CacheKey& key) {
    SourceKey entry{target, names, context, key};
    std::lock_guard lock(mutex_);
    // Another thread may have remembered it meanwhile: one entry per arguments.
    std::erase_if(source_keys_, [&](const SourceKey& known) { return known.is_for(target, names, context); });
    keep_last(source_keys_, std::move(entry), kept);
}

std::optional<CacheKey> ProgramKeyMemo::lookup_key(CodeType target, const std::vector<std::string>& names,
                                                   const KeyContext& context) const {
    std::lock_guard lock(mutex_);
    for (const SourceKey& known : source_keys_) {
        if (!known.is_for(target, names, context)) continue;
        for (const auto& [source, key] : first_keys_)
            if (source == known.key) return key;
        return std::nullopt;
    }
    return std::nullopt;
}

void ProgramKeyMemo::remember_first_key(const CacheKey& source_key, const CacheKey& key) {
    std::lock_guard lock(mutex_);
    auto same = [&](const auto& entry) { return entry.first == source_key; };
    std::erase_if(first_keys_, same);
    keep_last(first_keys_, std::pair{source_key, key}, kept);
}

}  // namespace cudacore::detail
