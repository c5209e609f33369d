#include "support/watched_environment.hpp"

#include <atomic>
#include <cstring>
#include <mutex>
#include <set>

extern char** environ;

namespace cudacore::detail {

// What the environment looked like when the value was read: glibc's setenv, putenv and unsetenv
// replace, append or shift the entries of `environ` (and move it when it grows), so while its
// address, its length, its last entry and the variable's entry are those seen, and the entry
// still holds the value (a putenv string written in place), the value is the one read.
struct WatchedVariable::Snapshot {
    char** environment = nullptr;
    std::size_t count = 0;        // entries before the terminating null
    const char* last = nullptr;   // environment[count - 1]
    std::size_t index = 0;        // of the variable's entry, when set
    const char* entry = nullptr;  // "NAME=value", or nullptr when unset
    const std::string* value = nullptr;

    bool still_true(std::size_t name_length) const noexcept {
        char** now = environ;
        if (now != environment) return false;
        if (now == nullptr) return true;
        if (now[count] != nullptr || (count != 0 && now[count - 1] != last)) return false;
        if (entry == nullptr) return true;
        return now[index] == entry && std::memcmp(entry + name_length + 1, value->c_str(), value->size() + 1) == 0;
    }
};

namespace {

// The values seen, by value: a pointer per value for the life of the process. Leaked on purpose:
// usable from static destructors, a few bytes per value seen (as glibc's setenv keeps every
// string it made).
struct Interned {
    std::mutex mutex;
    std::set<std::string> values;
};
Interned& interned() {
    static auto* kept = new Interned;
    return *kept;
}

}  // namespace

WatchedVariable::WatchedVariable(const char* name) noexcept : name_(name), name_length_(std::strlen(name)) {}
WatchedVariable::~WatchedVariable() = default;

const std::string* WatchedVariable::value() const {
    const Snapshot* seen = std::atomic_ref(current_).load(std::memory_order_acquire);
    if (seen != nullptr && seen->still_true(name_length_)) [[likely]]
        return seen->value;
    return read_again()->value;
}

const WatchedVariable::Snapshot* WatchedVariable::read_again() const {
    auto owned = std::make_unique<Snapshot>();
    Snapshot* made = owned.get();
    made->environment = environ;
    const std::size_t name_length = name_length_;
    for (char** entry = made->environment; entry != nullptr && *entry != nullptr; ++entry, ++made->count) {
        // The first entry of the name, as getenv answers.
        if (made->entry == nullptr && std::strncmp(*entry, name_, name_length) == 0 &&
            (*entry)[name_length] == '=') {
            made->index = made->count;
            made->entry = *entry;
        }
    }
    if (made->count != 0) made->last = made->environment[made->count - 1];
    if (made->entry != nullptr) {
        Interned& all = interned();
        std::lock_guard lock(all.mutex);
        made->value = &*all.values.emplace(made->entry + name_length + 1).first;
    }
    {
        std::lock_guard lock(made_mutex_);
        made_.push_back(std::move(owned));
    }
    std::atomic_ref(current_).store(made, std::memory_order_release);
    return made;
}

}  // namespace cudacore::detail
