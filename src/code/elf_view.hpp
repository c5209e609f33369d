// A read-only view of a little-endian ELF file in memory: its header, its section table (read in
// place when aligned, no copy), section names and contents, and symbol tables. Opening it checks
// the header and that the section table and its name table lie in the bytes; every later access
// is bounds-checked again, so the view is safe on bytes nobody has validated (what it cannot
// find reads as absent). Deeper checks (every section, symbol and relocation) are
// code_validation's, which uses this view.
#pragma once

#include "code/bounded_read.hpp"
#include "code/cuda_elf.hpp"

#include <elf.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace cudacore::detail {

struct Elf32Types {
    using Ehdr = Elf32_Ehdr;
    using Shdr = Elf32_Shdr;
    using Phdr = Elf32_Phdr;
    using Sym = Elf32_Sym;
    using Rel = Elf32_Rel;
    using Rela = Elf32_Rela;
    static std::uint64_t rel_sym(std::uint64_t info) { return ELF32_R_SYM(info); }
};
struct Elf64Types {
    using Ehdr = Elf64_Ehdr;
    using Shdr = Elf64_Shdr;
    using Phdr = Elf64_Phdr;
    using Sym = Elf64_Sym;
    using Rel = Elf64_Rel;
    using Rela = Elf64_Rela;
    static std::uint64_t rel_sym(std::uint64_t info) { return ELF64_R_SYM(info); }
};

// The ELF class (ELFCLASS32 or ELFCLASS64) of the bytes; throws MalformedBytes when they do not
// start with the ELF magic or name another class.
inline unsigned char elf_class(std::string_view bytes) {
    if (bytes.size() < EI_NIDENT || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0)
        fail_malformed("no ELF magic");
    const auto elf_class = static_cast<unsigned char>(bytes[EI_CLASS]);
    if (elf_class != ELFCLASS32 && elf_class != ELFCLASS64)
        fail_malformed("unknown ELF class " + num(elf_class));
    return elf_class;
}

template <typename Types>
class ElfView {
public:
    using Ehdr = typename Types::Ehdr;
    using Shdr = typename Types::Shdr;
    using Sym = typename Types::Sym;

    // Reads the header and the section table; throws MalformedBytes when the header is not a
    // little-endian ELF of this class and version, a cubin's type is neither executable nor
    // relocatable, or the section table or its name table is out of place. `bytes` must outlive
    // the view.
    explicit ElfView(std::string_view bytes) : bytes_(bytes) {
        header_ = read_at<Ehdr>(bytes_, 0, "ELF header");
        if (header_.e_ident[EI_DATA] != ELFDATA2LSB)
            fail_malformed("not a little-endian ELF (EI_DATA " + num(header_.e_ident[EI_DATA]) + ")");
        if (header_.e_ident[EI_VERSION] != EV_CURRENT || header_.e_version != EV_CURRENT)
            fail_malformed("unknown ELF version " + num(header_.e_version));
        if (header_.e_ehsize != sizeof(Ehdr))
            fail_malformed("ELF header size " + num(header_.e_ehsize) + ", expected " + num(sizeof(Ehdr)));
        if (is_cubin() && header_.e_type != ET_EXEC && header_.e_type != ET_REL)
            fail_malformed("cubin of ELF type " + num(header_.e_type) +
                           " (neither executable nor relocatable)");
        read_section_table();
    }
    // The section table may point into the view's own copy: not copied or moved.
    ElfView(const ElfView&) = delete;
    ElfView& operator=(const ElfView&) = delete;

    std::string_view bytes() const noexcept { return bytes_; }
    const Ehdr& header() const noexcept { return header_; }
    bool is_cubin() const noexcept { return header_.e_machine == kEmCuda; }

    // Every section header, section 0 (reserved, SHT_NULL) included.
    std::span<const Shdr> sections() const noexcept { return sections_; }
    // The index of the section name table; 0 when there is none.
    std::size_t section_names_index() const noexcept { return section_names_; }

    // The name of section `index`; "" when it has none or it is not a terminated string inside
    // the name table.
    std::string_view section_name(std::size_t index) const noexcept {
        if (section_names_ == 0 || index >= sections_.size()) return {};
        const std::string_view strings = contents(sections_[section_names_]);
        if (sections_[index].sh_name >= strings.size()) return {};
        const std::string_view rest = strings.substr(sections_[index].sh_name);
        const std::size_t end = rest.find('\0');
        return end == std::string_view::npos ? std::string_view() : rest.substr(0, end);
    }

    // The bytes of a section; "" for one without any in the file (NOBITS) or out of bounds.
    std::string_view contents(const Shdr& section) const noexcept {
        if (section.sh_type == SHT_NOBITS || !in_bounds(section.sh_offset, section.sh_size, bytes_.size()))
            return {};
        return bytes_.substr(section.sh_offset, section.sh_size);
    }

    // The first section named `name`, or nullptr. Each section's name is compared with `name`,
    // not read to its end: any number of sections may share one long name.
    const Shdr* find_section(std::string_view name) const noexcept {
        if (section_names_ == 0) return nullptr;
        const std::string_view strings = contents(sections_[section_names_]);
        for (std::size_t index = 1; index < sections_.size(); ++index) {
            const std::size_t at = sections_[index].sh_name;
            if (at < strings.size() && strings.size() - at > name.size() &&
                strings.substr(at, name.size()) == name && strings[at + name.size()] == '\0')
                return &sections_[index];
        }
        return nullptr;
    }

    // The section `section` links to (sh_link), or nullptr when out of range.
    const Shdr* linked(const Shdr& section) const noexcept {
        return section.sh_link < sections_.size() ? &sections_[section.sh_link] : nullptr;
    }

    // Calls `visit(symbol, name)` for each whole symbol of the symbol table `symbols`; `name()`
    // gives its name, a std::optional<std::string_view>, nullopt when the name offset lies outside
    // the linked string table (a name without its NUL ends at the table's end). The name is read
    // only when asked: any number of symbols may share one long name.
    template <typename Visit>
    void for_each_symbol(const Shdr& symbols, Visit&& visit) const {
        const std::string_view table = contents(symbols);
        const Shdr* strings_section = linked(symbols);
        const std::string_view strings = strings_section ? contents(*strings_section) : std::string_view();
        for (std::size_t offset = 0; table.size() - offset >= sizeof(Sym); offset += sizeof(Sym)) {
            Sym symbol;
            std::memcpy(&symbol, table.data() + offset, sizeof(Sym));
            visit(symbol, [&]() -> std::optional<std::string_view> {
                if (symbol.st_name >= strings.size()) return std::nullopt;
                const std::string_view rest = strings.substr(symbol.st_name);
                return rest.substr(0, rest.find('\0'));
            });
        }
    }

private:
    void read_section_table() {
        if (header_.e_shoff == 0) fail_malformed("no section header table");
        if (header_.e_shentsize != sizeof(Shdr))
            fail_malformed("section header size " + num(header_.e_shentsize) + ", expected " +
                           num(sizeof(Shdr)));
        // Section 0 holds the real count and string-table index when they overflow 16 bits.
        const Shdr first = read_at<Shdr>(bytes_, header_.e_shoff, "section header table");
        // It is reserved (SHT_NULL): readers skip it, so a table hidden there would go unchecked.
        if (first.sh_type != SHT_NULL)
            fail_malformed("section 0 is of type " + num(first.sh_type) +
                           "; it is reserved and must be SHT_NULL");
        const std::uint64_t count = header_.e_shnum ? header_.e_shnum : first.sh_size;
        if (count == 0) fail_malformed("section header table with no entries");
        if (!table_in_bounds(header_.e_shoff, count, sizeof(Shdr), bytes_.size()))
            fail_malformed("section header table (offset " + num(header_.e_shoff) + ", " + num(count) +
                           " entries) runs past the end");
        // Read in place when the table is aligned (a loaded cubin's always is); copied only
        // otherwise. Validation runs on every first load: no allocation on that path.
        const char* table = bytes_.data() + header_.e_shoff;
        if (reinterpret_cast<std::uintptr_t>(table) % alignof(Shdr) == 0) {
            sections_ = {reinterpret_cast<const Shdr*>(table), static_cast<std::size_t>(count)};
        } else {
            unaligned_copy_.resize(count);
            std::memcpy(unaligned_copy_.data(), table, count * sizeof(Shdr));
            sections_ = unaligned_copy_;
        }
        const std::uint64_t names = header_.e_shstrndx == SHN_XINDEX ? first.sh_link : header_.e_shstrndx;
        if (names != SHN_UNDEF) {
            if (names >= count)
                fail_malformed("section name table index " + num(names) + " out of range (" +
                               num(count) + " sections)");
            if (sections_[names].sh_type != SHT_STRTAB)
                fail_malformed("section name table " + num(names) + " is not a string table");
            section_names_ = names;
        }
    }

    std::string_view bytes_;
    Ehdr header_{};
    std::span<const Shdr> sections_;
    std::vector<Shdr> unaligned_copy_;  // the section table, when it is not aligned in bytes_
    std::size_t section_names_ = 0;
};

}  // namespace cudacore::detail
