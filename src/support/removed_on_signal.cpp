#include "support/removed_on_signal.hpp"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <time.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <system_error>
#include <thread>
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
// Set by the first removal: the process is ending, and nothing more is registered or made.
std::atomic<bool> removal_begun{false};
constexpr int kEnding = -2;  // take_slot's answer once removal_begun is set

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
    // Entries are removed while the folder is read: read it again from the start until the
    // folder itself goes (a few passes at most: its owner may still be writing into it, as the
    // process runs on while this thread removes; a writer adding files meanwhile is bounded).
    for (int pass = 0; pass < 8; ++pass) {
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
            }
        }
        if (::unlinkat(directory, name, AT_REMOVEDIR) == 0 || errno != ENOTEMPTY) break;
    }
    ::close(folder);
}

// Takes a free slot for writing: its number, -1 when the table is full, or kEnding once a
// removal has begun. A removal that has not seen removal_begun's change before this slot was
// taken sees the slot (both sequentially consistent), and waits for it.
int take_slot() noexcept {
    if (removal_begun.load()) return kEnding;
    for (int i = 0; i < kSlots; ++i) {
        int expected = kFree;
        if (!slots[i].state.compare_exchange_strong(expected, kWriting)) continue;
        int seen = highest_used.load();
        while (seen < i + 1 && !highest_used.compare_exchange_weak(seen, i + 1)) {
        }
        if (removal_begun.load()) {
            slots[i].state.store(kFree);
            return kEnding;
        }
        return i;
    }
    return -1;
}

// Puts `path` in the slot taken by take_slot and hands it to removals; a path too long frees
// the slot. Returns the slot, or -1.
int fill_slot(int slot, const char* path) noexcept {
    const std::size_t length = std::strlen(path);
    if (length == 0 || length >= PATH_MAX) {
        slots[slot].state.store(kFree);
        return -1;
    }
    std::memcpy(slots[slot].path, path, length + 1);
    slots[slot].state.store(kHolding, std::memory_order_release);
    return slot;
}

std::int64_t monotonic_ns() noexcept {
    timespec now {};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    return std::int64_t{now.tv_sec} * 1000000000 + now.tv_nsec;
}

// Waits while slot `i` is being written (by another thread, a few system calls), up to
// kRemovalWaitsForMake: a writer interrupted by a signal handler on its own thread never ends.
void wait_while_written(int i) noexcept {
    if (slots[i].state.load(std::memory_order_acquire) != kWriting) return;
    const std::int64_t give_up =
        monotonic_ns() + std::chrono::nanoseconds(kRemovalWaitsForMake).count();
    while (slots[i].state.load(std::memory_order_acquire) == kWriting && monotonic_ns() < give_up) {
        const timespec pause{0, 100000};  // 0.1 ms
        ::nanosleep(&pause, nullptr);
    }
}

}  // namespace

int register_removed_on_signal(const char* path) noexcept {
    const std::size_t length = std::strlen(path);
    if (length == 0 || length >= PATH_MAX) return -1;
    const int slot = take_slot();
    return slot < 0 ? -1 : fill_slot(slot, path);
}

void unregister_removed_on_signal(int slot) noexcept {
    if (slot < 0 || slot >= kSlots) return;
    int expected = kHolding;
    // Fails only when a removal took the slot: it stays taken (the process is ending).
    slots[slot].state.compare_exchange_strong(expected, kFree, std::memory_order_acq_rel);
}

int remove_registered_paths() noexcept {
    const int saved_errno = errno;  // a signal handler must leave errno as it found it
    removal_begun.store(true);
    int removed = 0;
    const int used = highest_used.load();
    // Paths being made are waited for first, so that nothing is removed while this waits: the
    // process runs on meanwhile, and NVRTC crashes (SIGSEGV) when its PCH folder goes mid-compile.
    for (int i = 0; i < used; ++i) wait_while_written(i);
    for (int i = 0; i < used; ++i) {
        int expected = kHolding;
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

RemovedOnSignal RemovedOnSignal::make(const std::function<std::filesystem::path()>& make) {
    const int slot = take_slot();
    if (slot == kEnding) {
        std::this_thread::sleep_for(kEndingWait);  // the process ends meanwhile
        throw std::system_error(ECANCELED, std::generic_category(),
                                "the process is ending (its temporary files are being removed)");
    }
    std::filesystem::path made;
    try {
        made = make();
    } catch (...) {
        if (slot >= 0) slots[slot].state.store(kFree);
        throw;
    }
    RemovedOnSignal registration;
    if (slot >= 0) registration.slot_ = fill_slot(slot, made.c_str());
    return registration;
}

void RemovedOnSignal::release() noexcept {
    unregister_removed_on_signal(std::exchange(slot_, -1));
}

}  // namespace cudacore::detail
