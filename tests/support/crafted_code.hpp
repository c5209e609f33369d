// Code files made by hand for tests: a minimal well-formed cubin, and the malformed or hostile
// inputs that once crashed, looped or exhausted memory (each made here, none read from disk).
// Header-only, so that helper programs (which link only the library) can use it too.
#pragma once

#include <elf.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace cudacore::test {

template <typename T>
void put_at(std::string& bytes, std::size_t offset, const T& value) {
    if (bytes.size() < offset + sizeof(T)) bytes.resize(offset + sizeof(T), '\0');
    std::memcpy(bytes.data() + offset, &value, sizeof(T));
}

template <typename T>
T get_at(const std::string& bytes, std::size_t offset) {
    T value{};
    std::memcpy(&value, bytes.data() + offset, sizeof(T));
    return value;
}

struct CraftedSection {
    std::string name;
    std::uint32_t type = SHT_PROGBITS;
    std::string data;
    std::uint32_t link = 0;  // a section index of the result (0 null, 1 .shstrtab, then these)
    std::uint32_t info = 0;
    std::uint64_t entry_size = 0;
    std::uint64_t flags = 0;
};

// A little-endian ELF64 executable for `machine` (EM_CUDA by default, sm_90 in e_flags): section
// 0 is null, 1 is .shstrtab, then `sections` in order (index 2 onwards). No program headers.
inline std::string craft_elf(const std::vector<CraftedSection>& sections, std::uint16_t machine = 190) {
    std::string names(1, '\0');
    std::vector<std::uint32_t> name_offsets;
    auto add_name = [&](const std::string& name) {
        name_offsets.push_back(static_cast<std::uint32_t>(names.size()));
        names += name;
        names += '\0';
    };
    add_name(".shstrtab");
    for (const auto& section : sections) add_name(section.name);

    std::string elf(sizeof(Elf64_Ehdr), '\0');
    std::vector<Elf64_Shdr> headers(2 + sections.size());
    auto place = [&](Elf64_Shdr& header, const std::string& data) {
        elf.resize((elf.size() + 7) / 8 * 8, '\0');
        header.sh_offset = elf.size();
        header.sh_size = data.size();
        elf += data;
    };
    headers[1].sh_type = SHT_STRTAB;
    headers[1].sh_name = name_offsets[0];
    headers[1].sh_addralign = 1;
    place(headers[1], names);
    for (std::size_t i = 0; i < sections.size(); ++i) {
        Elf64_Shdr& header = headers[2 + i];
        header.sh_name = name_offsets[1 + i];
        header.sh_type = sections[i].type;
        header.sh_link = sections[i].link;
        header.sh_info = sections[i].info;
        header.sh_entsize = sections[i].entry_size;
        header.sh_flags = sections[i].flags;
        header.sh_addralign = 8;
        place(header, sections[i].data);
    }
    elf.resize((elf.size() + 7) / 8 * 8, '\0');
    const std::size_t table = elf.size();
    for (const auto& header : headers) elf.append(reinterpret_cast<const char*>(&header), sizeof header);

    Elf64_Ehdr ehdr{};
    std::memcpy(ehdr.e_ident, ELFMAG, SELFMAG);
    ehdr.e_ident[EI_CLASS] = ELFCLASS64;
    ehdr.e_ident[EI_DATA] = ELFDATA2LSB;
    ehdr.e_ident[EI_VERSION] = EV_CURRENT;
    ehdr.e_ident[EI_OSABI] = 0x41;
    ehdr.e_ident[EI_ABIVERSION] = 8;
    ehdr.e_type = ET_EXEC;
    ehdr.e_machine = machine;
    ehdr.e_version = EV_CURRENT;
    ehdr.e_flags = 90 << 8;
    ehdr.e_ehsize = sizeof(Elf64_Ehdr);
    ehdr.e_shoff = table;
    ehdr.e_shentsize = sizeof(Elf64_Shdr);
    ehdr.e_shnum = static_cast<std::uint16_t>(headers.size());
    ehdr.e_shstrndx = 1;
    std::memcpy(elf.data(), &ehdr, sizeof ehdr);
    return elf;
}

// Structurally sound, and holding no code: passes validation, which is all it is for.
inline std::string minimal_cubin() { return craft_elf({}); }

// The 4 bytes of an ELF magic, then 64 KiB of random bytes (fixed seed).
inline std::string fake_elf() {
    std::string bytes = "\x7f" "ELF";
    std::mt19937 random(10);
    for (int i = 0; i < 64 * 1024; ++i) bytes += static_cast<char>(random() & 0xff);
    return bytes;
}

// A fatbin holding one uncompressed image (`kind`: 1 PTX, 2 ELF) for sm_`sm`, laid out as the
// toolkit's fatbinary writes it.
inline std::string fatbin_around(std::string_view image, std::uint32_t sm, std::uint16_t kind = 2) {
    constexpr std::uint32_t kEntryHeader = 64;
    std::string entry;
    put_at<std::uint16_t>(entry, 0, kind);
    put_at<std::uint16_t>(entry, 2, 0x0101);
    put_at<std::uint32_t>(entry, 4, kEntryHeader);
    put_at<std::uint64_t>(entry, 8, image.size());
    put_at<std::uint32_t>(entry, 28, sm);
    put_at<std::uint64_t>(entry, 40, 0x11);  // flags
    entry.resize(kEntryHeader, '\0');
    entry += image;
    std::string fatbin;
    put_at<std::uint32_t>(fatbin, 0, 0xBA55ED50);
    put_at<std::uint16_t>(fatbin, 4, 1);
    put_at<std::uint16_t>(fatbin, 6, 16);
    put_at<std::uint64_t>(fatbin, 8, entry.size());
    return fatbin + entry;
}

// 84 bytes: a fatbin header claiming 40 bytes of entries, then one entry whose 64-byte header
// alone is larger than that, with a payload size of 2^64 - 64: a walk that subtracts without
// checking wraps around and comes back to the same offset forever.
inline std::string wrapping_fatbin() {
    std::string fatbin;
    put_at<std::uint32_t>(fatbin, 0, 0xBA55ED50);
    put_at<std::uint16_t>(fatbin, 4, 1);
    put_at<std::uint16_t>(fatbin, 6, 16);
    put_at<std::uint64_t>(fatbin, 8, 40);
    put_at<std::uint16_t>(fatbin, 16, 1);  // kind: PTX, so nothing is looked into
    put_at<std::uint16_t>(fatbin, 18, 0x0101);
    put_at<std::uint32_t>(fatbin, 20, 64);
    put_at<std::uint64_t>(fatbin, 24, std::uint64_t(0) - 64);
    put_at<std::uint32_t>(fatbin, 44, 90);
    fatbin.resize(84, '\0');
    return fatbin;
}

// About 1 MB: 21,000 kernel symbols all named at offset 0 of a 512 KiB string table, with no
// NUL anywhere in it unless `terminated`. Copying each name up to the next NUL is 10 GB.
inline std::string symbol_bomb_cubin(bool terminated) {
    std::string strings(512 * 1024, 'k');
    if (terminated) strings.back() = '\0';
    std::string symbols(sizeof(Elf64_Sym), '\0');  // symbol 0 is null
    for (int i = 0; i < 21000; ++i) {
        Elf64_Sym symbol{};
        symbol.st_name = 0;
        symbol.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
        symbol.st_other = 0x10;  // a CUDA entry function
        symbol.st_shndx = SHN_UNDEF;
        symbols.append(reinterpret_cast<const char*>(&symbol), sizeof symbol);
    }
    return craft_elf({{".strtab", SHT_STRTAB, strings},
                      {".symtab", SHT_SYMTAB, symbols, /*link=*/2, /*info=*/1, sizeof(Elf64_Sym)}});
}

// PTX whose identifier after `directive` (".entry" or ".target") is `length` characters long.
inline std::string long_identifier_ptx(const std::string& directive, std::size_t length) {
    const std::string identifier(length, 'a');
    if (directive == ".target")
        return ".version 8.0\n.target " + identifier + "\n.address_size 64\n";
    return ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry " + identifier +
           "(\n)\n{\nret;\n}\n";
}

}  // namespace cudacore::test

namespace cudacore::test {

// Mutant number `index` of a well-formed ELF, deterministic for a given index: by turns, 20
// random bytes changed after the ELF header; a truncation; the section and program header
// tables swapped (offsets exchanged, or two section headers exchanged); a few bytes of the
// headers and tables changed.
inline std::string mutated_elf(const std::string& original, unsigned index) {
    std::mt19937 random(0xC0DE + index);
    std::string bytes = original;
    auto pick = [&](std::size_t from, std::size_t to) {  // in [from, to)
        return from + random() % (to > from ? to - from : 1);
    };
    const auto header = get_at<Elf64_Ehdr>(original, 0);
    switch (index % 4) {
        case 0:
            for (int i = 0; i < 20; ++i) bytes[pick(64, bytes.size())] = static_cast<char>(random());
            break;
        case 1: bytes.resize(pick(1, bytes.size())); break;
        case 2:
            if (random() % 2 == 0 || header.e_shnum < 3) {
                Elf64_Ehdr swapped = header;
                std::swap(swapped.e_shoff, swapped.e_phoff);
                put_at(bytes, 0, swapped);
            } else {
                const std::size_t a = pick(1, header.e_shnum), b = pick(1, header.e_shnum);
                const std::size_t at_a = header.e_shoff + a * sizeof(Elf64_Shdr);
                const std::size_t at_b = header.e_shoff + b * sizeof(Elf64_Shdr);
                const auto section_a = get_at<Elf64_Shdr>(original, at_a);
                put_at(bytes, at_a, get_at<Elf64_Shdr>(original, at_b));
                put_at(bytes, at_b, section_a);
            }
            break;
        default: {
            // Bytes of the ELF header, the section header table or the program header table.
            for (int i = 0, n = 1 + static_cast<int>(random() % 4); i < n; ++i) {
                std::size_t at = 0;
                switch (random() % 3) {
                    case 0: at = pick(0, sizeof(Elf64_Ehdr)); break;
                    case 1: at = pick(header.e_shoff, header.e_shoff + header.e_shnum * sizeof(Elf64_Shdr)); break;
                    default: at = pick(header.e_phoff, header.e_phoff + header.e_phnum * sizeof(Elf64_Phdr)); break;
                }
                if (at < bytes.size()) bytes[at] = static_cast<char>(random());
            }
            break;
        }
    }
    return bytes;
}

// `cubin` (a relocatable cubin, compiled with -rdc) with the symbol index of its first .nv.info
// attribute pointed far past the symbol table (its high byte set to 0xff). The attribute table
// is not among the checked structures, and nvJitLink 13 reads the index unchecked: SIGSEGV while
// adding the input. Empty when the cubin has no .nv.info section.
inline std::string with_nv_info_symbol_past_the_table(std::string cubin) {
    Elf64_Ehdr header;
    if (cubin.size() < sizeof header) return {};
    std::memcpy(&header, cubin.data(), sizeof header);
    Elf64_Shdr names;
    std::memcpy(&names, cubin.data() + header.e_shoff + header.e_shstrndx * header.e_shentsize,
                sizeof names);
    for (unsigned i = 0; i < header.e_shnum; ++i) {
        Elf64_Shdr section;
        std::memcpy(&section, cubin.data() + header.e_shoff + i * header.e_shentsize, sizeof section);
        if (std::strcmp(cubin.data() + names.sh_offset + section.sh_name, ".nv.info") != 0) continue;
        // An attribute: format byte, attribute byte, 16-bit size, then the symbol index (32 bits).
        cubin[section.sh_offset + 4 + 3] = static_cast<char>(0xff);
        return cubin;
    }
    return {};
}

}  // namespace cudacore::test
