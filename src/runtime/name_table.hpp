// A name -> value table read without locks: get_kernel's cache of the Kernels an ObjectCode
// handed out. Readers never block or write shared memory; writers (rare: once per name) take a
// mutex. Entries are never removed, and tables outgrown are kept until the NameTable goes, so a
// reader never sees freed memory (at most twice the final table's slots in all).
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <xxhash.h>  // inlined into the library (XXH_INLINE_ALL, set in CMakeLists.txt)

namespace cudacore::detail {

template <class Value>
class NameTable {
public:
    NameTable() = default;
    NameTable(const NameTable&) = delete;
    NameTable& operator=(const NameTable&) = delete;

    // The value stored under `name`, or nullptr. Lock-free; the pointer stays valid while the
    // table lives.
    const Value* find(std::string_view name) const noexcept {
        const Slots* slots = current_.load(std::memory_order_acquire);
        if (!slots) return nullptr;
        for (std::size_t i = hash(name) & slots->mask;; i = (i + 1) & slots->mask) {
            const Entry* entry = slots->entries[i].load(std::memory_order_acquire);
            if (!entry) return nullptr;
            if (entry->name == name) return &entry->value;
        }
    }

    // Stores `value` under `name` unless a value is there already; returns the stored one
    // (the first one wins).
    const Value& insert(std::string_view name, Value value) {
        std::lock_guard lock(mutex_);
        if (const Value* found = find(name)) return *found;
        owned_entries_.push_back(std::make_unique<Entry>(Entry{std::string(name), std::move(value)}));
        const Entry* entry = owned_entries_.back().get();
        Slots* slots = owned_slots_.empty() ? nullptr : owned_slots_.back().get();
        // At most half full, so every probe ends at an empty slot.
        if (!slots || owned_entries_.size() * 2 > slots->mask + 1) {
            auto bigger = std::make_unique<Slots>(slots ? (slots->mask + 1) * 2 : 8);
            for (const auto& owned : owned_entries_) place(*bigger, owned.get());
            owned_slots_.push_back(std::move(bigger));
            current_.store(owned_slots_.back().get(), std::memory_order_release);
        } else {
            place(*slots, entry);
        }
        return entry->value;
    }

    // Calls f(value) for every stored value, under the writers' mutex.
    template <class F>
    void for_each(F&& f) const {
        std::lock_guard lock(mutex_);
        for (const auto& entry : owned_entries_) f(entry->value);
    }

private:
    struct Entry {
        std::string name;
        Value value;
    };
    struct Slots {
        explicit Slots(std::size_t size)
            : mask(size - 1), entries(std::make_unique<std::atomic<const Entry*>[]>(size)) {}
        std::size_t mask;  // size - 1; size is a power of two
        std::unique_ptr<std::atomic<const Entry*>[]> entries;
    };

    // XXH3 (inlined): a short name hashes in a few instructions, where std::hash is an
    // out-of-line call; every repeated get_kernel pays it.
    static std::size_t hash(std::string_view name) noexcept {
        return static_cast<std::size_t>(XXH3_64bits(name.data(), name.size()));
    }
    static void place(Slots& slots, const Entry* entry) noexcept {
        std::size_t i = hash(entry->name) & slots.mask;
        while (slots.entries[i].load(std::memory_order_relaxed)) i = (i + 1) & slots.mask;
        slots.entries[i].store(entry, std::memory_order_release);
    }

    std::atomic<const Slots*> current_{nullptr};
    mutable std::mutex mutex_;
    std::vector<std::unique_ptr<Entry>> owned_entries_;
    std::vector<std::unique_ptr<Slots>> owned_slots_;  // the last one is current_
};

}  // namespace cudacore::detail
