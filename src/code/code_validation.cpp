#include "code/code_validation.hpp"

#include "cudacore/errors.hpp"

#include <ar.h>
#include <elf.h>

#include <algorithm>
#include <cstring>
#include <cstdint>
#include <initializer_list>
#include <span>

namespace cudacore::detail {

namespace {

constexpr std::uint16_t kEmCuda = 190;  // EM_CUDA (older <elf.h> may lack the name)
// NVIDIA's attribute sections (.nv.info, .nv.info.KERNEL) are SHT_LOPROC; the driver walks
// their records, so they are walked here too.
constexpr std::uint32_t kShtCudaInfo = SHT_LOPROC;
constexpr std::uint32_t kFatbinMagic = 0xBA55ED50;
constexpr std::uint32_t kLtoIrMagic = 0x7F4E43ED;
// Fatbin entry header: u16 kind, u16 version, u32 header size, u64 payload size, u32
// compressed size, u32, u16 minor, u16 major, u32 sm, u32 name offset, u32 name size, u64 flags,
// u64, u64 uncompressed size (64 bytes as the toolkit writes it).
constexpr std::uint64_t kFatbinCompressed = 0x2000 | 0x8000;  // LZ4, Zstandard
constexpr std::size_t kFatbinFlagsOffset = 40;
constexpr std::size_t kFatbinHeaderSize = 16;       // magic, version, header size, entries size
constexpr std::size_t kFatbinEntryMinHeader = 48;   // up to and including the flags
constexpr std::size_t kLtoIrMinSize = 16;

// What is wrong, without the outer context; validate_code adds the type, name and size, and
// nested images add where they sit.
struct Malformed {
    std::string detail;
};

[[noreturn]] void fail(std::string detail) { throw Malformed{std::move(detail)}; }

std::string num(std::uint64_t value) { return std::to_string(value); }

template <typename T>
T read(std::string_view bytes, std::uint64_t offset, const char* what) {
    T out;
    if (offset > bytes.size() || bytes.size() - offset < sizeof(T))
        fail(std::string(what) + " at offset " + num(offset) + " runs past the end");
    std::memcpy(&out, bytes.data() + offset, sizeof(T));
    return out;
}

// [offset, offset + size) lies within `total` bytes, computed without overflow.
bool in_bounds(std::uint64_t offset, std::uint64_t size, std::uint64_t total) {
    return offset <= total && size <= total - offset;
}

// `count` entries of `entry_size` bytes at `offset` lie within `total` bytes.
bool table_in_bounds(std::uint64_t offset, std::uint64_t count, std::uint64_t entry_size,
                     std::uint64_t total) {
    return offset <= total && (entry_size == 0 || count <= (total - offset) / entry_size);
}

// ---- ELF ----------------------------------------------------------------------------------

struct Elf32 {
    using Ehdr = Elf32_Ehdr;
    using Shdr = Elf32_Shdr;
    using Phdr = Elf32_Phdr;
    using Sym = Elf32_Sym;
    using Rel = Elf32_Rel;
    using Rela = Elf32_Rela;
    static std::uint64_t rel_sym(std::uint64_t info) { return ELF32_R_SYM(info); }
};
struct Elf64 {
    using Ehdr = Elf64_Ehdr;
    using Shdr = Elf64_Shdr;
    using Phdr = Elf64_Phdr;
    using Sym = Elf64_Sym;
    using Rel = Elf64_Rel;
    using Rela = Elf64_Rela;
    static std::uint64_t rel_sym(std::uint64_t info) { return ELF64_R_SYM(info); }
};

template <typename Types>
class ElfValidator {
public:
    using Ehdr = typename Types::Ehdr;
    using Shdr = typename Types::Shdr;
    using Phdr = typename Types::Phdr;
    using Sym = typename Types::Sym;

    explicit ElfValidator(std::string_view elf) : elf_(elf) {}

    void run() {
        header_ = read<Ehdr>(elf_, 0, "ELF header");
        if (header_.e_ident[EI_DATA] != ELFDATA2LSB)
            fail("not a little-endian ELF (EI_DATA " + num(header_.e_ident[EI_DATA]) + ")");
        if (header_.e_ident[EI_VERSION] != EV_CURRENT || header_.e_version != EV_CURRENT)
            fail("unknown ELF version " + num(header_.e_version));
        if (header_.e_ehsize != sizeof(Ehdr))
            fail("ELF header size " + num(header_.e_ehsize) + ", expected " + num(sizeof(Ehdr)));
        cuda_ = header_.e_machine == kEmCuda;
        if (cuda_ && header_.e_type != ET_EXEC && header_.e_type != ET_REL)
            fail("cubin of ELF type " + num(header_.e_type) + " (neither executable nor relocatable)");
        read_section_table();
        read_program_table();
        for (std::size_t i = 1; i < sections_.size(); ++i) check_section(i);
    }

private:
    void read_section_table() {
        if (header_.e_shoff == 0) fail("no section header table");
        if (header_.e_shentsize != sizeof(Shdr))
            fail("section header size " + num(header_.e_shentsize) + ", expected " +
                 num(sizeof(Shdr)));
        // Section 0 holds the real count and string-table index when they overflow 16 bits.
        const Shdr first = read<Shdr>(elf_, header_.e_shoff, "section header table");
        // It is reserved (SHT_NULL): readers skip it, so a table hidden there would go unchecked.
        if (first.sh_type != SHT_NULL)
            fail("section 0 is of type " + num(first.sh_type) + "; it is reserved and must be SHT_NULL");
        std::uint64_t count = header_.e_shnum ? header_.e_shnum : first.sh_size;
        if (count == 0) fail("section header table with no entries");
        if (!table_in_bounds(header_.e_shoff, count, sizeof(Shdr), elf_.size()))
            fail("section header table (offset " + num(header_.e_shoff) + ", " + num(count) +
                 " entries) runs past the end");
        // Read in place when the table is aligned (a loaded cubin's always is); copied only
        // otherwise. Validation runs on every first load: no allocation on that path.
        const char* table = elf_.data() + header_.e_shoff;
        if (reinterpret_cast<std::uintptr_t>(table) % alignof(Shdr) == 0) {
            sections_ = {reinterpret_cast<const Shdr*>(table), static_cast<std::size_t>(count)};
        } else {
            unaligned_copy_.resize(count);
            std::memcpy(unaligned_copy_.data(), table, count * sizeof(Shdr));
            sections_ = unaligned_copy_;
        }
        std::uint64_t names = header_.e_shstrndx == SHN_XINDEX ? first.sh_link : header_.e_shstrndx;
        if (names != SHN_UNDEF) {
            if (names >= count)
                fail("section name table index " + num(names) + " out of range (" + num(count) +
                     " sections)");
            if (sections_[names].sh_type != SHT_STRTAB)
                fail("section name table " + num(names) + " is not a string table");
            section_names_ = names;
        }
    }

    void read_program_table() {
        std::uint64_t count = header_.e_phnum;
        if (count == PN_XNUM) count = sections_[0].sh_info;
        if (count == 0) return;
        if (header_.e_phentsize != sizeof(Phdr))
            fail("program header size " + num(header_.e_phentsize) + ", expected " +
                 num(sizeof(Phdr)));
        if (!table_in_bounds(header_.e_phoff, count, sizeof(Phdr), elf_.size()))
            fail("program header table (offset " + num(header_.e_phoff) + ", " + num(count) +
                 " entries) runs past the end");
        for (std::uint64_t i = 0; i < count; ++i) {
            const Phdr p = read<Phdr>(elf_, header_.e_phoff + i * sizeof(Phdr), "program header");
            if (!in_bounds(p.p_offset, p.p_filesz, elf_.size()))
                fail("segment " + num(i) + " (offset " + num(p.p_offset) + ", " + num(p.p_filesz) +
                     " bytes) runs past the end");
            if (p.p_type == PT_LOAD && p.p_filesz > p.p_memsz)
                fail("segment " + num(i) + " has more bytes in the file (" + num(p.p_filesz) +
                     ") than in memory (" + num(p.p_memsz) + ")");
        }
    }

    std::string section_label(std::size_t index) const {
        std::string label = "section " + num(index);
        const std::string_view name = section_name(index);
        if (!name.empty()) label += " (" + std::string(name) + ")";
        return label;
    }

    // The name, or "" before it is known to be sound.
    std::string_view section_name(std::size_t index) const {
        if (section_names_ == 0) return {};
        const Shdr& table = sections_[section_names_];
        if (!in_bounds(table.sh_offset, table.sh_size, elf_.size())) return {};
        const std::string_view strings = elf_.substr(table.sh_offset, table.sh_size);
        if (sections_[index].sh_name >= strings.size()) return {};
        const std::string_view rest = strings.substr(sections_[index].sh_name);
        const std::size_t end = rest.find('\0');
        return end == std::string_view::npos ? std::string_view() : rest.substr(0, std::min<std::size_t>(end, 64));
    }

    // The bytes of a section that has them (not NOBITS), already checked in bounds.
    std::string_view contents(const Shdr& s) const {
        return s.sh_type == SHT_NOBITS ? std::string_view() : elf_.substr(s.sh_offset, s.sh_size);
    }

    // The bytes of a table about to be walked entry by entry. Sections may overlap, so the walk
    // is bounded by the file's size (twice over: sound files walk each byte at most once).
    std::string_view walked(std::size_t index) {
        const std::string_view bytes = contents(sections_[index]);
        walked_ += bytes.size();
        if (walked_ > 2 * elf_.size())
            fail(section_label(index) + " overlaps tables already checked (work limit reached)");
        return bytes;
    }

    const Shdr& linked(std::size_t index, std::initializer_list<std::uint32_t> types,
                       const char* expected) const {
        const Shdr& s = sections_[index];
        const bool type_ok = s.sh_link < sections_.size() &&
                             std::find(types.begin(), types.end(), sections_[s.sh_link].sh_type) != types.end();
        if (!type_ok)
            fail(section_label(index) + " links to section " + num(s.sh_link) + ", which is not " +
                 expected);
        return sections_[s.sh_link];
    }

    void check_entries(std::size_t index, std::size_t entry_size) const {
        const Shdr& s = sections_[index];
        if (s.sh_entsize != entry_size)
            fail(section_label(index) + " has entries of " + num(s.sh_entsize) + " bytes, expected " +
                 num(entry_size));
        if (s.sh_size % entry_size != 0)
            fail(section_label(index) + " size " + num(s.sh_size) + " is not a whole number of entries");
    }

    void check_section(std::size_t index) {
        const Shdr& s = sections_[index];
        if (section_names_ != 0 && s.sh_name >= sections_[section_names_].sh_size)
            fail("section " + num(index) + " name offset " + num(s.sh_name) + " out of range");
        if (s.sh_type != SHT_NOBITS && !in_bounds(s.sh_offset, s.sh_size, elf_.size()))
            fail(section_label(index) + " (offset " + num(s.sh_offset) + ", " + num(s.sh_size) +
                 " bytes) runs past the end");
        switch (s.sh_type) {
            case SHT_STRTAB:
                if (s.sh_size > 0 && elf_[s.sh_offset + s.sh_size - 1] != '\0')
                    fail(section_label(index) + " is a string table that does not end with NUL");
                break;
            case SHT_SYMTAB:
            case SHT_DYNSYM: check_symbols(index); break;
            case SHT_REL: check_relocations<typename Types::Rel>(index); break;
            case SHT_RELA: check_relocations<typename Types::Rela>(index); break;
            case SHT_GROUP: check_group(index); break;
            case SHT_NOTE: check_notes(index); break;
            default:
                if (cuda_ && s.sh_type == kShtCudaInfo) check_cuda_info(index);
                break;
        }
    }

    void check_symbols(std::size_t index) {
        check_entries(index, sizeof(Sym));
        // The string table's own check (in bounds, NUL-terminated) happens in its turn.
        const Shdr& strings = linked(index, {SHT_STRTAB}, "a string table");
        const std::string_view bytes = walked(index);
        for (std::size_t offset = 0; offset < bytes.size(); offset += sizeof(Sym)) {
            Sym symbol;
            std::memcpy(&symbol, bytes.data() + offset, sizeof(Sym));
            const std::size_t number = offset / sizeof(Sym);
            if (symbol.st_name >= strings.sh_size && symbol.st_name != 0)
                fail("symbol " + num(number) + " of " + section_label(index) + ": name offset " +
                     num(symbol.st_name) + " out of range (string table of " + num(strings.sh_size) +
                     " bytes)");
            const std::uint16_t home = symbol.st_shndx;
            if (home == SHN_UNDEF || home >= SHN_LORESERVE) continue;
            if (home >= sections_.size())
                fail("symbol " + num(number) + " of " + section_label(index) + ": section index " +
                     num(home) + " out of range (" + num(sections_.size()) + " sections)");
            // In a cubin, functions and objects sit inside their section (at addresses relative
            // to it, all sections at address 0): the loader copies st_size bytes from there.
            const Shdr& target = sections_[home];
            const unsigned type = symbol.st_info & 0xf;
            if (cuda_ && (type == STT_FUNC || type == STT_OBJECT) && target.sh_type != SHT_NOBITS &&
                target.sh_addr == 0 &&
                !in_bounds(symbol.st_value, symbol.st_size, target.sh_size))
                fail("symbol " + num(number) + " of " + section_label(index) + " (value " +
                     num(symbol.st_value) + ", " + num(symbol.st_size) + " bytes) lies outside " +
                     section_label(home));
        }
    }

    template <typename Rel>
    void check_relocations(std::size_t index) {
        check_entries(index, sizeof(Rel));
        const Shdr& s = sections_[index];
        // No symbol table (link 0, as in static executables): only symbol 0 may be named.
        std::uint64_t symbol_count = 1;
        if (s.sh_link != 0) {
            const Shdr& symbols = linked(index, {SHT_SYMTAB, SHT_DYNSYM}, "a symbol table");
            symbol_count = symbols.sh_entsize ? symbols.sh_size / symbols.sh_entsize : 0;
        }
        const Shdr* target = nullptr;
        if (s.sh_flags & SHF_INFO_LINK) {
            if (s.sh_info >= sections_.size())
                fail(section_label(index) + " relocates section " + num(s.sh_info) +
                     ", out of range");
            target = &sections_[s.sh_info];
        }
        const std::string_view bytes = walked(index);
        for (std::size_t offset = 0; offset < bytes.size(); offset += sizeof(Rel)) {
            Rel rel;
            std::memcpy(&rel, bytes.data() + offset, sizeof(Rel));
            const std::uint64_t symbol = Types::rel_sym(rel.r_info);
            if (symbol >= symbol_count)
                fail("relocation " + num(offset / sizeof(Rel)) + " of " + section_label(index) +
                     ": symbol " + num(symbol) + " out of range (" + num(symbol_count) + " symbols)");
            // In a cubin, relocations patch bytes of their target section.
            if (cuda_ && target && target->sh_type != SHT_NOBITS && target->sh_addr == 0 &&
                rel.r_offset >= target->sh_size)
                fail("relocation " + num(offset / sizeof(Rel)) + " of " + section_label(index) +
                     ": offset " + num(rel.r_offset) + " outside " + section_label(s.sh_info));
        }
    }

    void check_group(std::size_t index) {
        check_entries(index, sizeof(std::uint32_t));
        const std::string_view bytes = walked(index);
        for (std::size_t offset = sizeof(std::uint32_t); offset < bytes.size(); offset += 4) {
            std::uint32_t member;
            std::memcpy(&member, bytes.data() + offset, sizeof member);
            if (member >= sections_.size())
                fail(section_label(index) + " names section " + num(member) + ", out of range");
        }
    }

    // Notes: name size, description size, type, then the name and the description, each
    // starting at the note alignment (4, or 8 for notes aligned so).
    void check_notes(std::size_t index) {
        const Shdr& s = sections_[index];
        const std::uint64_t align = s.sh_addralign == 8 ? 8 : 4;
        const std::string_view bytes = walked(index);
        const std::uint64_t size = bytes.size();
        // Aligned up, or past the end (never wrapping) when that is beyond the section.
        auto aligned = [&](std::uint64_t at, std::uint64_t n) -> std::uint64_t {
            if (n > size - at) return size + 1;
            const std::uint64_t end = at + n;
            return end + (align - end % align) % align;
        };
        std::uint64_t offset = 0;
        while (offset < size) {
            const auto name_size = read<std::uint32_t>(bytes, offset, "note header");
            const auto desc_size = read<std::uint32_t>(bytes, offset + 4, "note header");
            read<std::uint32_t>(bytes, offset + 8, "note header");
            const std::uint64_t desc = aligned(offset + 12, name_size);
            const std::uint64_t next = desc > size ? size + 1 : aligned(desc, desc_size);
            // The last note's padding may be cut by the section's end.
            if (next > size && (desc > size || desc_size > size - desc))
                fail("note at offset " + num(offset) + " of " + section_label(index) +
                     " runs past the section");
            offset = next;
        }
    }

    // Attribute records: u8 format, u8 attribute, u16 value; format 4 (sized) is followed by
    // `value` bytes. They must tile the section exactly.
    void check_cuda_info(std::size_t index) {
        const std::string_view bytes = walked(index);
        std::size_t offset = 0;
        while (offset < bytes.size()) {
            if (bytes.size() - offset < 4)
                fail("attribute record at offset " + num(offset) + " of " + section_label(index) +
                     " is truncated");
            const auto format = static_cast<unsigned char>(bytes[offset]);
            std::uint16_t value;
            std::memcpy(&value, bytes.data() + offset + 2, sizeof value);
            if (format < 1 || format > 4)
                fail("attribute record at offset " + num(offset) + " of " + section_label(index) +
                     " has unknown format " + num(format));
            const std::size_t payload = format == 4 ? value : 0;
            if (payload > bytes.size() - offset - 4)
                fail("attribute record at offset " + num(offset) + " of " + section_label(index) +
                     " (" + num(payload) + " bytes) runs past the section");
            offset += 4 + payload;
        }
    }

    std::string_view elf_;
    Ehdr header_{};
    bool cuda_ = false;
    std::span<const Shdr> sections_;
    std::vector<Shdr> unaligned_copy_;  // the section table, when it is not aligned in elf_
    std::size_t section_names_ = 0;
    std::uint64_t walked_ = 0;
};

// Validates any little-endian ELF; `expect_cuda`: it must be a cubin.
void validate_elf(std::string_view elf, bool expect_cuda) {
    if (elf.size() < EI_NIDENT || std::memcmp(elf.data(), ELFMAG, SELFMAG) != 0)
        fail("no ELF magic");
    switch (static_cast<unsigned char>(elf[EI_CLASS])) {
        case ELFCLASS64: {
            if (expect_cuda) {
                const auto header = read<Elf64_Ehdr>(elf, 0, "ELF header");
                if (header.e_machine != kEmCuda)
                    fail("ELF for machine " + num(header.e_machine) + ", not a cubin (EM_CUDA, 190)");
            }
            ElfValidator<Elf64>(elf).run();
            break;
        }
        case ELFCLASS32:
            if (expect_cuda) fail("a 32-bit ELF is not a cubin");
            ElfValidator<Elf32>(elf).run();
            break;
        default: fail("unknown ELF class " + num(static_cast<unsigned char>(elf[EI_CLASS])));
    }
}

// ---- fatbin -------------------------------------------------------------------------------

void validate_ltoir(std::string_view code) {
    if (code.size() < kLtoIrMinSize) fail("shorter than an LTO-IR container header");
    if (read<std::uint32_t>(code, 0, "LTO-IR header") != kLtoIrMagic) fail("no LTO-IR magic");
}

// Nested failures say where they are.
template <typename F>
void nested(const std::string& where, F&& check) {
    try {
        check();
    } catch (const Malformed& inner) {
        fail(where + ": " + inner.detail);
    }
}

std::vector<FatbinImage> walk_fatbin(std::string_view code) {
    if (read<std::uint32_t>(code, 0, "fatbin header") != kFatbinMagic) fail("no fatbin magic");
    const auto header_size = read<std::uint16_t>(code, 6, "fatbin header");
    const auto entries_size = read<std::uint64_t>(code, 8, "fatbin header");
    if (header_size < kFatbinHeaderSize || header_size > code.size())
        fail("fatbin header size " + num(header_size) + " out of range");
    if (entries_size > code.size() - header_size)
        fail("entries (" + num(entries_size) + " bytes after a " + num(header_size) +
             "-byte header) run past the end");
    const std::size_t end = header_size + entries_size;
    std::vector<FatbinImage> images;
    // Every entry moves the walk forward by at least its minimal header, so the walk ends.
    std::size_t offset = header_size;
    while (end - offset >= kFatbinEntryMinHeader) {
        const std::string where = "entry " + num(images.size()) + " at offset " + num(offset);
        const auto entry_header = read<std::uint32_t>(code, offset + 4, "fatbin entry");
        const auto payload = read<std::uint64_t>(code, offset + 8, "fatbin entry");
        if (entry_header < kFatbinEntryMinHeader || entry_header > end - offset)
            fail(where + ": header size " + num(entry_header) + " out of range");
        if (payload > end - offset - entry_header)
            fail(where + ": payload of " + num(payload) + " bytes runs past the end of the entries");
        FatbinImage image;
        image.kind = read<std::uint16_t>(code, offset, "fatbin entry");
        image.sm = read<std::uint32_t>(code, offset + 28, "fatbin entry");
        image.compressed =
            (read<std::uint64_t>(code, offset + kFatbinFlagsOffset, "fatbin entry") & kFatbinCompressed) != 0;
        if (image.compressed && read<std::uint32_t>(code, offset + 16, "fatbin entry") > payload)
            fail(where + ": compressed size exceeds the payload of " + num(payload) + " bytes");
        image.offset = offset;
        image.payload = code.substr(offset + entry_header, payload);
        if (!image.compressed) {
            nested(where, [&] {
                if (image.kind == 2) validate_elf(image.payload, true);
                if (image.kind == 8) validate_ltoir(image.payload);
            });
        }
        images.push_back(image);
        offset += entry_header + payload;
    }
    if (images.empty()) fail("no entries");
    return images;
}

// ---- ar library ---------------------------------------------------------------------------

std::string trimmed(const char* field, std::size_t size) {
    std::string out(field, size);
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out;
}

// A decimal field of an ar header (digits, then spaces).
std::uint64_t decimal_field(const char* field, std::size_t size, const std::string& where) {
    std::uint64_t value = 0;
    std::size_t i = 0;
    for (; i < size && field[i] >= '0' && field[i] <= '9'; ++i) value = value * 10 + (field[i] - '0');
    if (i == 0) fail(where + ": size field is not a number");
    for (; i < size; ++i)
        if (field[i] != ' ') fail(where + ": size field is not a number");
    return value;
}

void validate_library(std::string_view code) {
    if (code.size() < SARMAG || code.substr(0, SARMAG) != ARMAG) fail("no archive magic");
    std::size_t offset = SARMAG;
    std::size_t members = 0;
    while (offset < code.size()) {
        // A final padding byte may close the archive.
        if (code.size() - offset == 1 && code[offset] == '\n') break;
        const std::string where = "member " + num(members) + " at offset " + num(offset);
        const auto header = read<ar_hdr>(code, offset, "archive member header");
        if (std::memcmp(header.ar_fmag, ARFMAG, 2) != 0) fail(where + ": bad header terminator");
        const std::uint64_t size = decimal_field(header.ar_size, sizeof header.ar_size, where);
        const std::size_t data = offset + sizeof(ar_hdr);
        if (size > code.size() - data)
            fail(where + ": " + num(size) + " bytes run past the end");
        const std::string name = trimmed(header.ar_name, sizeof header.ar_name);
        const std::string_view member = code.substr(data, size);
        if (name == "/") {
            // Symbol index: big-endian count, then as many member offsets, then names.
            if (size < 4) fail(where + ": truncated symbol index");
            const auto* p = reinterpret_cast<const unsigned char*>(member.data());
            const std::uint64_t count = (std::uint64_t{p[0]} << 24) | (p[1] << 16) | (p[2] << 8) | p[3];
            if (count > (size - 4) / 4) fail(where + ": symbol index of " + num(count) + " entries runs past the member");
            for (std::uint64_t i = 0; i < count; ++i) {
                const unsigned char* q = p + 4 + 4 * i;
                const std::uint64_t target = (std::uint64_t{q[0]} << 24) | (q[1] << 16) | (q[2] << 8) | q[3];
                if (!in_bounds(target, sizeof(ar_hdr), code.size()))
                    fail(where + ": symbol index entry " + num(i) + " points past the end");
            }
        } else if (member.size() >= SELFMAG && std::memcmp(member.data(), ELFMAG, SELFMAG) == 0) {
            nested(where + " ('" + name + "')", [&] { validate_elf(member, false); });
        }
        ++members;
        offset = data + size + (size & 1);
    }
}

std::string hex_start(std::string_view code) {
    static const char* digits = "0123456789abcdef";
    std::string out;
    for (unsigned char c : code.substr(0, 8)) {
        out += digits[c >> 4];
        out += digits[c & 15];
    }
    return out;
}

void validate_container(CodeType type, std::string_view code) {
    switch (type) {
        case CodeType::ptx: return;
        case CodeType::cubin: validate_elf(code, true); return;
        case CodeType::object: validate_elf(code, false); return;
        case CodeType::fatbin: walk_fatbin(code); return;
        case CodeType::library: validate_library(code); return;
        case CodeType::ltoir: validate_ltoir(code); return;
    }
    fail("unknown code type " + num(static_cast<int>(type)));
}

[[noreturn]] void throw_malformed(CodeType type, std::string_view code, std::string_view name,
                                  const std::string& detail) {
    std::string message = "malformed " + std::string(to_string(type));
    if (!name.empty()) message += " '" + std::string(name) + "'";
    message += " (" + num(code.size()) + " bytes";
    if (detail.find("magic") != std::string::npos) message += ", starting " + hex_start(code);
    throw InvalidArgumentError(message + "): " + detail);
}

}  // namespace

void validate_code(CodeType type, std::string_view code, std::string_view name) {
    if (code.empty()) throw_malformed(type, code, name, "empty");
    try {
        validate_container(type, code);
    } catch (const Malformed& malformed) {
        throw_malformed(type, code, name, malformed.detail);
    }
}

void validate_link_input(const ObjectCode& input, std::size_t index, std::string_view linker_name) {
    try {
        validate_code(input.code_type(), input.code(),
                      input.name().empty() ? "input " + num(index) : input.name());
    } catch (const InvalidArgumentError& e) {
        throw InvalidArgumentError("Linker '" + std::string(linker_name) + "': input " + num(index) +
                                   " is unusable: " + e.what());
    }
}

std::vector<FatbinImage> fatbin_images(std::string_view fatbin, std::string_view name) {
    try {
        return walk_fatbin(fatbin);
    } catch (const Malformed& malformed) {
        throw_malformed(CodeType::fatbin, fatbin, name, malformed.detail);
    }
}

}  // namespace cudacore::detail
