#include "support/removed_on_signal.hpp"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

namespace cudacore::detail {

namespace {

// A slot is free, being written (by register), holding a path, or taken by a removal (which
// keeps it: the process is ending).
enum SlotState : int { kFree, kWriting, kHolding, kRemoving };

struct Slot {
    std::atomic<int> state{kFree};
    char path[PATH_MAX];
};

constexpr int kSlots = 256;
// Constant-initialised (no constructor runs): usable from any static constructor or destructor
// and from a signal handler at any moment.
Slot slots[kSlots];
std::atomic<int> highest_used{0};  // slots at or past this were never used

// Folders deeper than this below a registered one are left (the temporaries are shallow).
constexpr int kMaxDepth = 16;

struct LinuxDirent64 {
    std::uint64_t d_ino;
    std::int64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[1];
};

// Removes `name` in `directory` (a file, a link, or a folder with everything in it), with
// system calls only.
void remove_tree_at(int directory, const char* name, int depth) noexcept {
    if (::unlinkat(directory, name, 0) == 0 || errno == ENOENT) return;
    if (errno != EISDIR && errno != EPERM) return;
    if (depth > kMaxDepth) return;
    const int folder = ::openat(directory, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (folder < 0) return;
    // Entries are removed while the folder is read: read it again from the start until a pass
    // finds nothing to remove (a few passes at most; a writer adding files meanwhile is bounded).
    for (int pass = 0; pass < 8; ++pass) {
        bool removed_any = false;
        ::lseek(folder, 0, SEEK_SET);
        alignas(8) char buffer[2048];
        for (;;) {
            const long got = ::syscall(SYS_getdents64, folder, buffer, sizeof buffer);
            if (got <= 0) break;
            for (long at = 0; at < got;) {
                const auto* entry = reinterpret_cast<const LinuxDirent64*>(buffer + at);
                at += entry->d_reclen;
                const char* entry_name = entry->d_name;
                if (std::strcmp(entry_name, ".") == 0 || std::strcmp(entry_name, "..") == 0) continue;
                remove_tree_at(folder, entry_name, depth + 1);
                removed_any = true;
            }
        }
        if (!removed_any) break;
    }
    ::close(folder);
    ::unlinkat(directory, name, AT_REMOVEDIR);
}

}  // namespace

int register_removed_on_signal(const char* path) noexcept {
    const std::size_t length = std::strlen(path);
    if (length == 0 || length >= PATH_MAX) return -1;
    for (int i = 0; i < kSlots; ++i) {
        int expected = kFree;
        if (!slots[i].state.compare_exchange_strong(expected, kWriting, std::memory_order_acquire)) continue;
        std::memcpy(slots[i].path, path, length + 1);
        int seen = highest_used.load(std::memory_order_relaxed);
        while (seen < i + 1 && !highest_used.compare_exchange_weak(seen, i + 1)) {
        }
        slots[i].state.store(kHolding, std::memory_order_release);
        return i;
    }
    return -1;
}

void unregister_removed_on_signal(int slot) noexcept {
    if (slot < 0 || slot >= kSlots) return;
    int expected = kHolding;
    // Fails only when a removal took the slot: it stays taken (the process is ending).
    slots[slot].state.compare_exchange_strong(expected, kFree, std::memory_order_acq_rel);
}

int remove_registered_paths() noexcept {
    const int saved_errno = errno;  // a signal handler must leave errno as it found it
    int removed = 0;
    const int used = highest_used.load(std::memory_order_acquire);
    for (int i = 0; i < used; ++i) {
        int expected = kHolding;
        // A slot being written is waited for briefly: its writer is another thread (a writer
        // interrupted by this handler on its own thread is skipped after the bound).
        for (int spin = 0; spin < 100000 && slots[i].state.load(std::memory_order_acquire) == kWriting; ++spin) {
        }
        if (!slots[i].state.compare_exchange_strong(expected, kRemoving, std::memory_order_acq_rel)) continue;
        remove_tree_at(AT_FDCWD, slots[i].path, 0);
        ++removed;
    }
    errno = saved_errno;
    return removed;
}

int registered_path_count() noexcept {
    int count = 0;
    for (int i = 0; i < kSlots; ++i)
        if (slots[i].state.load(std::memory_order_acquire) == kHolding) ++count;
    return count;
}

RemovedOnSignal::RemovedOnSignal(const std::filesystem::path& path) noexcept
    : slot_(register_removed_on_signal(path.c_str())) {}

RemovedOnSignal::RemovedOnSignal(RemovedOnSignal&& other) noexcept
    : slot_(std::exchange(other.slot_, -1)) {}

RemovedOnSignal& RemovedOnSignal::operator=(RemovedOnSignal&& other) noexcept {
    if (this != &other) {
        release();
        slot_ = std::exchange(other.slot_, -1);
    }
    return *this;
}

RemovedOnSignal::~RemovedOnSignal() { release(); }

void RemovedOnSignal::release() noexcept {
    unregister_removed_on_signal(std::exchange(slot_, -1));
}

}  // namespace cudacore::detail
