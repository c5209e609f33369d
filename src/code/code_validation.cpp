#include "code/code_validation.hpp"

#include "code/archive_reader.hpp"
#include "code/bounded_read.hpp"
#include "code/code_magic.hpp"
#include "code/cuda_elf.hpp"
#include "code/elf_view.hpp"
#include "code/nv_info_records.hpp"
#include "cudacore/errors.hpp"

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <cstdint>
#include <initializer_list>
#include <span>

namespace cudacore::detail {

namespace {

constexpr std::size_t kLtoIrMinSize = 16;

[[noreturn]] void fail(std::string detail) { fail_malformed(std::move(detail)); }

// ---- ELF ----------------------------------------------------------------------------------

// Every section, symbol, relocation, group, note and attribute record of an ELF whose header
// and section table ElfView has read.
template <typename Types>
class ElfValidator {
public:
    using Shdr = typename Types::Shdr;
    using Phdr = typename Types::Phdr;
    using Sym = typename Types::Sym;

    explicit ElfValidator(std::string_view elf)
        : elf_(elf), view_(elf), sections_(view_.sections()), cuda_(view_.is_cubin()) {}

    void run() {
        read_program_table();
        for (std::size_t i = 1; i < sections_.size(); ++i) check_section(i);
    }

private:
    void read_program_table() {
        const auto& header = view_.header();
        std::uint64_t count = header.e_phnum;
        if (count == PN_XNUM) count = sections_[0].sh_info;
        if (count == 0) return;
        if (header.e_phentsize != sizeof(Phdr))
            fail("program header size " + num(header.e_phentsize) + ", expected " +
                 num(sizeof(Phdr)));
        if (!table_in_bounds(header.e_phoff, count, sizeof(Phdr), elf_.size()))
            fail("program header table (offset " + num(header.e_phoff) + ", " + num(count) +
                 " entries) runs past the end");
        for (std::uint64_t i = 0; i < count; ++i) {
            const Phdr p = read_at<Phdr>(elf_, header.e_phoff + i * sizeof(Phdr), "program header");
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
        const std::string_view name = view_.section_name(index).substr(0, 64);
        if (!name.empty()) label += " (" + std::string(name) + ")";
        return label;
    }

    // The bytes of a table about to be walked entry by entry. Sections may overlap, so the walk
    // is bounded by the file's size (twice over: sound files walk each byte at most once).
    std::string_view walked(std::size_t index) {
        const std::string_view bytes = view_.contents(sections_[index]);
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
        const std::size_t names = view_.section_names_index();
        if (names != 0 && s.sh_name >= sections_[names].sh_size)
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
            const auto name_size = read_at<std::uint32_t>(bytes, offset, "note header");
            const auto desc_size = read_at<std::uint32_t>(bytes, offset + 4, "note header");
            read_at<std::uint32_t>(bytes, offset + 8, "note header");
            const std::uint64_t desc = aligned(offset + 12, name_size);
            const std::uint64_t next = desc > size ? size + 1 : aligned(desc, desc_size);
            // The last note's padding may be cut by the section's end.
            if (next > size && (desc > size || desc_size > size - desc))
                fail("note at offset " + num(offset) + " of " + section_label(index) +
                     " runs past the section");
            offset = next;
        }
    }

    // NVIDIA's attribute records must tile the section exactly.
    void check_cuda_info(std::size_t index) {
        for_each_nv_info_record(walked(index), [&] { return section_label(index); },
                                [](const NvInfoRecord&) {});
    }

    std::string_view elf_;
    ElfView<Types> view_;
    std::span<const Shdr> sections_;
    bool cuda_ = false;
    std::uint64_t walked_ = 0;
};

// Validates any little-endian ELF; `expect_cuda`: it must be a cubin.
void validate_elf(std::string_view elf, bool expect_cuda) {
    switch (elf_class(elf)) {
        case ELFCLASS64: {
            if (expect_cuda) {
                const auto header = read_at<Elf64_Ehdr>(elf, 0, "ELF header");
                if (header.e_machine != kEmCuda)
                    fail("ELF for machine " + num(header.e_machine) + ", not a cubin (EM_CUDA, 190)");
            }
            ElfValidator<Elf64Types>(elf).run();
            break;
        }
        default:  // ELFCLASS32
            if (expect_cuda) fail("a 32-bit ELF is not a cubin");
            ElfValidator<Elf32Types>(elf).run();
            break;
    }
}

// ---- fatbin -------------------------------------------------------------------------------

void validate_ltoir(std::string_view code) {
    if (code.size() < kLtoIrMinSize) fail("shorter than an LTO-IR container header");
    if (read_at<std::uint32_t>(code, 0, "LTO-IR header") != kLtoIrMagic) fail("no LTO-IR magic");
}

// Nested failures say where they are.
template <typename F>
void nested(const std::string& where, F&& check) {
    try {
        check();
    } catch (const MalformedBytes& inner) {
        fail(where + ": " + inner.detail);
    }
}

std::vector<FatbinImage> walk_fatbin(std::string_view code) {
    std::vector<FatbinImage> images;
    for_each_fatbin_image(code, [&](const FatbinImage& image, const std::string& where) {
        if (!image.compressed) {
            nested(where, [&] {
                if (image.kind == kFatbinElf) validate_elf(image.payload, true);
                if (image.kind == kFatbinLtoIr) validate_ltoir(image.payload);
            });
        }
        images.push_back(image);
    });
    return images;
}

// ---- ar library ---------------------------------------------------------------------------

void validate_library(std::string_view code) {
    for_each_archive_member(code, [](const ArchiveMember& member, const std::string& where) {
        if (member.bytes.size() >= SELFMAG && std::memcmp(member.bytes.data(), ELFMAG, SELFMAG) == 0)
            nested(where + " ('" + member.name + "')", [&] { validate_elf(member.bytes, false); });
    });
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
    } catch (const MalformedBytes& malformed) {
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
    } catch (const MalformedBytes& malformed) {
        throw_malformed(CodeType::fatbin, fatbin, name, malformed.detail);
    }
}

}  // namespace cudacore::detail
