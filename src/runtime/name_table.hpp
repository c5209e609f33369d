// A name -> value table read without locks: get_kernel's cache of the Kernels an ObjectCode
// handed out. Readers never block or write shared memory; writers (rare: once per name) take a
// mutex. Entries are never removed, and tables outgrown are kept until the NameTable goes, so a
// reader never sees freed memory (at most twice the final table's slots in all). The first table
// (8 slots, up to 4 names) lives inside the NameTable and entries are list nodes, so the first
// insert, which every first get_kernel makes, allocates one node and nothing else.
#pragma once

#include <atomic>
#include <cstddef>
#include <forward_list>
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
    NameTable() noexcept = default;
    NameTable(const NameTable&) = delete;
    NameTable& operator=(const NameTable&) = delete;

    // The value stored under `name`, or nullptr. Lock-free; the pointer stays valid while the
    // table lives.
    const Value* find(std::string_view name) const noexcept {
        const Entry* entry = probe(name);
        return entry ? &entry->value : nullptr;
    }

    // Stores `value` under `name` unless a value is there already; returns the stored one
    // (the first one wins).
    const Value& insert(std::string_view name, Value value) {
        std::lock_guard lock(mutex_);
        if (const Entry* found = probe(name)) return found->value;
        Slots* slots = current_.load(std::memory_order_relaxed);
        // At most half full, so every probe ends at an empty slot. Whatever may throw runs before
        // the table changes.
        std::unique_ptr<Slots> bigger;
        if ((count_ + 1) * 2 > slots->mask + 1) {
            bigger = std::make_unique<Slots>((slots->mask + 1) * 2);
            outgrown_.reserve(outgrown_.size() + 1);
        }
        const Entry* entry = &entries_.emplace_front(Entry{std::string(name), std::move(value)});
        ++count_;
        if (bigger) {
            for (const Entry& owned : entries_) place(*bigger, &owned);
            current_.store(bigger.get(), std::memory_order_release);
            outgrown_.push_back(std::move(bigger));
        } else {
            place(*slots, entry);
        }
        return entry->value;
    }

    // Calls f(value) for every stored value, under the writers' mutex.
    template <class F>
    void for_each(F&& f) const {
        std::lock_guard lock(mutex_);
        for (const Entry& entry : entries_) f(entry.value);
    }

private:
    struct Entry {
        std::string name;
        Value value;
    };
    const Entry* probe(std::string_view name) const noexcept {
        const Slots* slots = current_.load(std::memory_order_acquire);
        for (std::size_t i = hash(name) & slots->mask;; i = (i + 1) & slots->mask) {
            const Entry* entry = slots->entries[i].load(std::memory_order_acquire);
            if (!entry || entry->name == name) return entry;
        }
    }

    static constexpr std::size_t kFirstSlots = 8;
    struct Slots {
        // A table of `size` slots (a power of two) in `storage`, or in storage of its own.
        Slots(std::size_t size, std::atomic<const Entry*>* storage) : mask(size - 1), entries(storage) {}
        explicit Slots(std::size_t size)
            : mask(size - 1),
              owned(std::make_unique<std::atomic<const Entry*>[]>(size)),
              entries(owned.get()) {}
        std::size_t mask;  // size - 1
        std::unique_ptr<std::atomic<const Entry*>[]> owned;
        std::atomic<const Entry*>* entries;
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

    std::atomic<const Entry*> first_storage_[kFirstSlots] = {};
    Slots first_{kFirstSlots, first_storage_};
    std::atomic<Slots*> current_{&first_};
    mutable std::mutex mutex_;
    std::forward_list<Entry> entries_;  // nodes: an entry never moves
    std::size_t count_ = 0;
    std::vector<std::unique_ptr<Slots>> outgrown_;  // tables grown into; the last is current_
};

}  // namespace cudacore::detail
