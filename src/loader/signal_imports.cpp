#include "loader/signal_imports.hpp"

#include <elf.h>
#include <link.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstring>
#include <iterator>
#include <mutex>
#include <utility>

namespace cudacore::detail {

namespace {

// The 64-bit machines whose relocations (Rela) this knows; elsewhere nothing is pointed.
#if defined(__x86_64__)
constexpr bool kKnownMachine = true;
constexpr unsigned kJumpSlot = R_X86_64_JUMP_SLOT;
constexpr unsigned kGlobalData = R_X86_64_GLOB_DAT;
#elif defined(__aarch64__)
constexpr bool kKnownMachine = true;
constexpr unsigned kJumpSlot = R_AARCH64_JUMP_SLOT;
constexpr unsigned kGlobalData = R_AARCH64_GLOB_DAT;
#else
constexpr bool kKnownMachine = false;
constexpr unsigned kJumpSlot = 0;
constexpr unsigned kGlobalData = 0;
#endif

// Where the libraries whose imports were pointed are loaded (their PT_LOAD segments): a handler
// there is one of theirs. Appended under a lock, read without it.
struct LoadedRange {
    std::atomic<ElfW(Addr)> start{0}, end{0};
};
constexpr std::size_t kMaxRanges = 32;
LoadedRange pointed_ranges[kMaxRanges];
std::atomic<std::size_t> pointed_range_count{0};

bool in_pointed_library(const void* handler) {
    const auto address = reinterpret_cast<ElfW(Addr)>(handler);
    const std::size_t count = pointed_range_count.load(std::memory_order_acquire);
    for (std::size_t i = 0; i < count; ++i)
        if (address >= pointed_ranges[i].start.load(std::memory_order_relaxed) &&
            address < pointed_ranges[i].end.load(std::memory_order_relaxed))
            return true;
    return false;
}

// Whether the library, setting `wanted` where `now` is in force, puts back what a change of its
// own replaced through the real calls before its imports were pointed (another thread was inside
// NVRTC's first compile then, which puts its handler on SIGINT and SIGTERM and SIG_IGN on SIGINT
// for a moment and on SIGXFSZ, then puts back what those calls returned). Such a change left the
// library's handler or SIG_IGN in force, and what is put back is neither a handler of the library
// nor what is in force. Every later call of the library got what was in force from the pointed
// imports, so what it puts back is in force already: not made, the program's flags and mask
// stay. Not told apart: a program setting SIG_IGN itself during that first compile (undone, as
// the library alone would) and a library putting another object's handler over SIG_IGN (made).
bool puts_back_own_change(const struct sigaction& now, const void* wanted) {
    const auto* in_force = reinterpret_cast<const void*>(now.sa_handler);
    if (wanted == in_force || in_pointed_library(wanted)) return false;
    return in_pointed_library(in_force) || now.sa_handler == SIG_IGN;
}

// What the library gets for signal(): the disposition now. Nothing changes, but for a call that
// puts back what the library itself changed before the pointing (puts_back_own_change), which is
// made as the library asked.
sighandler_t unchanged_signal(int signal, sighandler_t handler) noexcept {
    struct sigaction now {};
    if (::sigaction(signal, nullptr, &now) != 0) return SIG_ERR;  // errno says why, as signal's
    if (puts_back_own_change(now, reinterpret_cast<const void*>(handler))) return ::signal(signal, handler);
    return now.sa_handler;
}

// What it gets for sigaction(): the disposition now in `old`; `action` is not applied, but for
// one that puts back what the library changed before the pointing.
int unchanged_sigaction(int signal, const struct sigaction* action, struct sigaction* old) noexcept {
    struct sigaction now {};
    if (::sigaction(signal, nullptr, &now) != 0) return -1;
    if (action && puts_back_own_change(now, reinterpret_cast<const void*>(action->sa_handler)))
        return ::sigaction(signal, action, old);
    if (old) *old = now;
    return 0;
}

// The loaded object that holds `address`: where it is loaded, its dynamic section, and the pages
// the dynamic linker made read-only after relocating (RELRO: whole pages, a partial last page
// of the segment stays writable).
struct LoadedObject {
    ElfW(Addr) address = 0;
    ElfW(Addr) base = 0;
    const ElfW(Dyn)* dynamic = nullptr;
    ElfW(Addr) relro_start = 0, relro_end = 0;
    std::pair<ElfW(Addr), ElfW(Addr)> loads[8] = {};  // its PT_LOAD segments: start, end
    std::size_t load_count = 0;
};

int find_object(dl_phdr_info* info, std::size_t, void* data) {
    auto& object = *static_cast<LoadedObject*>(data);
    bool holds = false;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)& segment = info->dlpi_phdr[i];
        const ElfW(Addr) start = info->dlpi_addr + segment.p_vaddr;
        if (segment.p_type == PT_LOAD) {
            holds = holds || (object.address >= start && object.address - start < segment.p_memsz);
            if (object.load_count < std::size(object.loads))
                object.loads[object.load_count++] = {start, start + segment.p_memsz};
        }
        if (segment.p_type == PT_DYNAMIC) object.dynamic = reinterpret_cast<const ElfW(Dyn)*>(start);
        if (segment.p_type == PT_GNU_RELRO) {  // the pages the dynamic linker made read-only
            const auto page_size = static_cast<ElfW(Addr)>(::sysconf(_SC_PAGESIZE));
            object.relro_start = start & ~(page_size - 1);
            object.relro_end = (start + segment.p_memsz) & ~(page_size - 1);
        }
    }
    if (holds) {
        object.base = info->dlpi_addr;
        return 1;
    }
    object = LoadedObject{object.address};
    return 0;
}

// The tables the relocations use, from the dynamic section. The dynamic linker rewrote these
// addresses to absolute ones on most machines; where it did not they are below the base.
struct RelocationTables {
    const ElfW(Sym)* symbols = nullptr;
    const char* names = nullptr;
    const ElfW(Rela)* plt = nullptr;  // DT_JMPREL, when its entries are Rela
    std::size_t plt_bytes = 0;
    const ElfW(Rela)* other = nullptr;  // DT_RELA (GOT slots of functions whose address is taken)
    std::size_t other_bytes = 0;
};

RelocationTables relocation_tables(const LoadedObject& object) {
    RelocationTables tables;
    bool plt_is_rela = false;
    const auto at = [&](ElfW(Addr) value) { return value < object.base ? value + object.base : value; };
    for (const ElfW(Dyn)* entry = object.dynamic; entry->d_tag != DT_NULL; ++entry) {
        switch (entry->d_tag) {
            case DT_SYMTAB: tables.symbols = reinterpret_cast<const ElfW(Sym)*>(at(entry->d_un.d_ptr)); break;
            case DT_STRTAB: tables.names = reinterpret_cast<const char*>(at(entry->d_un.d_ptr)); break;
            case DT_JMPREL: tables.plt = reinterpret_cast<const ElfW(Rela)*>(at(entry->d_un.d_ptr)); break;
            case DT_PLTRELSZ: tables.plt_bytes = entry->d_un.d_val; break;
            case DT_PLTREL: plt_is_rela = entry->d_un.d_val == DT_RELA; break;
            case DT_RELA: tables.other = reinterpret_cast<const ElfW(Rela)*>(at(entry->d_un.d_ptr)); break;
            case DT_RELASZ: tables.other_bytes = entry->d_un.d_val; break;
            default: break;
        }
    }
    if (!plt_is_rela) tables.plt_bytes = 0;
    return tables;
}

// Writes `value` into the slot at `slot`, making its page writable for the write when it lies in
// the read-only-after-relocation part.
bool write_slot(const LoadedObject& object, ElfW(Addr) slot, ElfW(Addr) value) {
    const bool read_only = slot >= object.relro_start && slot < object.relro_end;
    const auto page_size = static_cast<ElfW(Addr)>(::sysconf(_SC_PAGESIZE));
    void* page = reinterpret_cast<void*>(slot & ~(page_size - 1));
    if (read_only && ::mprotect(page, page_size, PROT_READ | PROT_WRITE) != 0) return false;
    // A thread of the program may call the library meanwhile: it sees the old target or the new.
    std::atomic_ref<ElfW(Addr)>(*reinterpret_cast<ElfW(Addr)*>(slot)).store(value);
    if (read_only) ::mprotect(page, page_size, PROT_READ);
    return true;
}

// Points the slots of `relocations` (of type `type`: a PLT's jump slots, or GOT slots) that
// name signal or sigaction. Each table is read for one type, so a DT_RELA range that takes in
// the PLT's relocations counts no slot twice.
int point_signal_slots(const LoadedObject& object, const RelocationTables& tables,
                       const ElfW(Rela)* relocations, std::size_t bytes, unsigned type) {
    int pointed = 0;
    for (std::size_t i = 0; relocations && i < bytes / sizeof(ElfW(Rela)); ++i) {
        const ElfW(Rela)& relocation = relocations[i];
        if (ELF64_R_TYPE(relocation.r_info) != type) continue;
        const char* name = tables.names + tables.symbols[ELF64_R_SYM(relocation.r_info)].st_name;
        ElfW(Addr) replacement = 0;
        if (std::strcmp(name, "signal") == 0) replacement = reinterpret_cast<ElfW(Addr)>(&unchanged_signal);
        if (std::strcmp(name, "sigaction") == 0) replacement = reinterpret_cast<ElfW(Addr)>(&unchanged_sigaction);
        if (replacement != 0 && write_slot(object, object.base + relocation.r_offset, replacement)) ++pointed;
    }
    return pointed;
}

// Notes where `object` is loaded, for in_pointed_library. False when there is no room left.
bool note_pointed_library(const LoadedObject& object) {
    static std::mutex mutex;
    std::lock_guard lock(mutex);
    const std::size_t count = pointed_range_count.load(std::memory_order_relaxed);
    if (count + object.load_count > kMaxRanges) return false;
    for (std::size_t i = 0; i < object.load_count; ++i) {
        pointed_ranges[count + i].start.store(object.loads[i].first, std::memory_order_relaxed);
        pointed_ranges[count + i].end.store(object.loads[i].second, std::memory_order_relaxed);
    }
    pointed_range_count.store(count + object.load_count, std::memory_order_release);
    return true;
}

}  // namespace

int keep_signal_dispositions(const void* address) noexcept {
    LoadedObject object{reinterpret_cast<ElfW(Addr)>(address)};
    if (!kKnownMachine) return 0;
    if (::dl_iterate_phdr(find_object, &object) == 0 || object.dynamic == nullptr) return 0;
    const RelocationTables tables = relocation_tables(object);
    if (tables.symbols == nullptr || tables.names == nullptr) return 0;
    // Before the slots: the pointed calls must know the library's own handlers from their first.
    if (!note_pointed_library(object)) return 0;
    return point_signal_slots(object, tables, tables.plt, tables.plt_bytes, kJumpSlot) +
           point_signal_slots(object, tables, tables.other, tables.other_bytes, kGlobalData);
}

}  // namespace cudacore::detail
