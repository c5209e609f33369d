#include "cudacore/code_inspection.hpp"

#include "cudacore/errors.hpp"

#include <elf.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <regex>

namespace cudacore {

namespace {

constexpr std::uint16_t kEmCuda = 190;  // EM_CUDA: NVIDIA's ELF machine type
constexpr unsigned char kStoCudaEntry = 0x10;  // st_other bit of a kernel (entry function)
constexpr std::uint32_t kFatbinMagic = 0xBA55ED50;
constexpr std::uint32_t kLtoIrMagic = 0x7F4E43ED;
constexpr std::uint64_t kFatbinCompressed = 0x2000;

template <typename T>
bool read_at(std::string_view bytes, std::size_t offset, T& out) noexcept {
    if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return false;
    std::memcpy(&out, bytes.data() + offset, sizeof(T));
    return true;
}

bool starts_with(std::string_view bytes, std::string_view prefix) noexcept {
    return bytes.substr(0, prefix.size()) == prefix;
}

// PTX is text with a .version directive before any code (comments may come first).
bool looks_like_ptx(std::string_view code) noexcept {
    const auto head = code.substr(0, 4096);
    if (head.find('\0') != std::string_view::npos && head.find('\0') + 1 < head.size()) return false;
    return head.find(".version") != std::string_view::npos &&
           code.find(".target") != std::string_view::npos;
}

[[noreturn]] void malformed(const char* what, std::string_view code, const std::string& detail) {
    throw InvalidArgumentError(std::string("malformed ") + what + " (" +
                               std::to_string(code.size()) + " bytes): " + detail);
}

std::string hex_prefix(std::string_view code) {
    static const char* digits = "0123456789abcdef";
    std::string out;
    for (unsigned char c : code.substr(0, 8)) {
        out += digits[c >> 4];
        out += digits[c & 15];
    }
    return out;
}

Elf64_Ehdr cubin_header(std::string_view cubin) {
    Elf64_Ehdr header{};
    if (!read_at(cubin, 0, header)) malformed("cubin", cubin, "shorter than an ELF header");
    if (header.e_ident[EI_CLASS] != ELFCLASS64) malformed("cubin", cubin, "not a 64-bit ELF");
    return header;
}

// The SM number lives in e_flags: bits 8..15 from ELF ABI version 8 (CUDA 12.8+), bits 0..7
// before that.
std::string cubin_arch(const Elf64_Ehdr& header) {
    const unsigned sm = header.e_ident[EI_ABIVERSION] >= 8 ? (header.e_flags >> 8) & 0xff
                                                           : header.e_flags & 0xff;
    return sm ? "sm_" + std::to_string(sm) : std::string();
}

}  // namespace

std::optional<CodeType> try_detect_code_type(std::string_view code) noexcept {
    std::uint32_t magic = 0;
    if (read_at(code, 0, magic)) {
        if (magic == kFatbinMagic) return CodeType::fatbin;
        if (magic == kLtoIrMagic) return CodeType::ltoir;
    }
    if (starts_with(code, "\x7f" "ELF")) {
        std::uint16_t machine = 0;
        if (!read_at(code, offsetof(Elf64_Ehdr, e_machine), machine)) return std::nullopt;
        return machine == kEmCuda ? CodeType::cubin : CodeType::object;
    }
    if (starts_with(code, "!<arch>\n")) return CodeType::library;
    if (looks_like_ptx(code)) return CodeType::ptx;
    return std::nullopt;
}

CodeType detect_code_type(std::string_view code) {
    if (auto type = try_detect_code_type(code)) return *type;
    throw InvalidArgumentError("unrecognised code (" + std::to_string(code.size()) +
                               " bytes, starting " + hex_prefix(code) +
                               "): not a cubin, fatbin, PTX, LTO-IR, object or library");
}

std::vector<std::string> ptx_kernel_names(std::string_view ptx) {
    // ".visible .entry name(" / ".entry name (" — one per kernel.
    static const std::regex entry(R"(\.entry\s+([A-Za-z_$%][A-Za-z0-9_$%]*)\s*\()");
    std::vector<std::string> names;
    const std::string text(ptx);
    for (auto it = std::sregex_iterator(text.begin(), text.end(), entry); it != std::sregex_iterator();
         ++it) {
        names.push_back((*it)[1].str());
    }
    return names;
}

namespace {

// The names of the cubin's symbols that `wanted` accepts, sorted.
template <class Wanted>
std::vector<std::string> cubin_symbol_names(std::string_view cubin, Wanted wanted) {
    const Elf64_Ehdr header = cubin_header(cubin);
    if (header.e_shentsize != sizeof(Elf64_Shdr))
        malformed("cubin", cubin, "unexpected section header size");
    auto section = [&](std::size_t index) {
        Elf64_Shdr shdr{};
        if (index >= header.e_shnum ||
            !read_at(cubin, header.e_shoff + index * sizeof(Elf64_Shdr), shdr))
            malformed("cubin", cubin, "section header " + std::to_string(index) + " out of range");
        return shdr;
    };
    std::vector<std::string> names;
    for (std::size_t i = 0; i < header.e_shnum; ++i) {
        const Elf64_Shdr symtab = section(i);
        if (symtab.sh_type != SHT_SYMTAB) continue;
        const Elf64_Shdr strtab = section(symtab.sh_link);
        if (strtab.sh_offset > cubin.size() || cubin.size() - strtab.sh_offset < strtab.sh_size)
            malformed("cubin", cubin, "string table out of range");
        const std::string_view strings = cubin.substr(strtab.sh_offset, strtab.sh_size);
        const std::size_t count = symtab.sh_entsize ? symtab.sh_size / symtab.sh_entsize : 0;
        for (std::size_t s = 0; s < count; ++s) {
            Elf64_Sym symbol{};
            if (!read_at(cubin, symtab.sh_offset + s * sizeof(Elf64_Sym), symbol))
                malformed("cubin", cubin, "symbol table out of range");
            if (!wanted(symbol)) continue;
            if (symbol.st_name >= strings.size())
                malformed("cubin", cubin, "symbol name out of range");
            const std::string_view rest = strings.substr(symbol.st_name);
            names.emplace_back(rest.substr(0, rest.find('\0')));
        }
    }
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return names;
}

}  // namespace

std::vector<std::string> cubin_kernel_names(std::string_view cubin) {
    return cubin_symbol_names(cubin, [](const Elf64_Sym& symbol) {
        return ELF64_ST_TYPE(symbol.st_info) == STT_FUNC && (symbol.st_other & kStoCudaEntry);
    });
}

std::vector<std::string> cubin_global_names(std::string_view cubin) {
    // A whole-program cubin gives its variables local binding: every defined object counts,
    // except the compiler's own ("$str" literals, ".nv..." reservations).
    std::vector<std::string> names = cubin_symbol_names(cubin, [](const Elf64_Sym& symbol) {
        return ELF64_ST_TYPE(symbol.st_info) == STT_OBJECT && symbol.st_shndx != SHN_UNDEF;
    });
    std::erase_if(names, [](const std::string& name) {
        return name.empty() || name[0] == '$' || name[0] == '.';
    });
    return names;
}

CodeInfo inspect_code(std::string_view code) {
    CodeInfo info;
    info.type = detect_code_type(code);
    info.size = code.size();
    switch (info.type) {
        case CodeType::cubin:
            info.arch = cubin_arch(cubin_header(code));
            info.kernels = cubin_kernel_names(code);
            break;
        case CodeType::ptx: {
            const std::string text(code.substr(0, 64 * 1024));
            std::smatch match;
            if (std::regex_search(text, match, std::regex(R"(\.target\s+([a-z]+_[0-9]+[a-z]?))")))
                info.arch = match[1].str();
            if (std::regex_search(text, match, std::regex(R"(\.version\s+([0-9]+\.[0-9]+))")))
                info.ptx_version = match[1].str();
            info.kernels = ptx_kernel_names(code);
            break;
        }
        case CodeType::fatbin: {
            // Header: magic, u16 version, u16 header size, u64 size of the entries that follow.
            std::uint16_t header_size = 0;
            std::uint64_t entries_size = 0;
            if (!read_at(code, 6, header_size) || !read_at(code, 8, entries_size))
                malformed("fatbin", code, "truncated header");
            std::size_t offset = header_size;
            const std::size_t end =
                entries_size > code.size() - std::min<std::size_t>(header_size, code.size())
                    ? code.size()
                    : header_size + entries_size;
            // Entry: u16 kind, u16 version, u32 header size, u64 payload size, ..., u32 sm at 28,
            // u64 flags at 32.
            while (offset + 40 <= end) {
                std::uint16_t kind = 0;
                std::uint32_t entry_header = 0, sm = 0;
                std::uint64_t payload = 0, flags = 0;
                read_at(code, offset, kind);
                read_at(code, offset + 4, entry_header);
                read_at(code, offset + 8, payload);
                read_at(code, offset + 28, sm);
                read_at(code, offset + 32, flags);
                if (entry_header < 40 || payload > end - offset - entry_header)
                    malformed("fatbin", code, "entry at offset " + std::to_string(offset) +
                                                  " runs past the end");
                FatbinEntry entry;
                entry.kind = kind == 1   ? "ptx"
                             : kind == 2 ? "elf"
                             : kind == 8 ? "ltoir"
                                         : "kind " + std::to_string(kind);
                entry.arch = "sm_" + std::to_string(sm);
                entry.size = payload;
                entry.compressed = (flags & kFatbinCompressed) != 0;
                const auto image = code.substr(offset + entry_header, payload);
                if (!entry.compressed && kind == 2 && try_detect_code_type(image) == CodeType::cubin) {
                    for (auto& name : cubin_kernel_names(image)) info.kernels.push_back(std::move(name));
                }
                info.entries.push_back(std::move(entry));
                offset += entry_header + payload;
            }
            if (info.entries.empty()) malformed("fatbin", code, "no entries");
            std::sort(info.kernels.begin(), info.kernels.end());
            info.kernels.erase(std::unique(info.kernels.begin(), info.kernels.end()),
                               info.kernels.end());
            bool one_arch = std::all_of(info.entries.begin(), info.entries.end(),
                                        [&](const FatbinEntry& e) { return e.arch == info.entries[0].arch; });
            if (one_arch) info.arch = info.entries[0].arch;
            break;
        }
        default:
            break;
    }
    return info;
}

CodeInfo inspect_code(const ObjectCode& code) {
    if (try_detect_code_type(code.code()) == code.code_type()) return inspect_code(code.code());
    // The bytes do not say what the ObjectCode declares (e.g. PTX without .version): trust the
    // declared type and claim nothing more.
    CodeInfo declared;
    declared.type = code.code_type();
    declared.size = code.size();
    return declared;
}

}  // namespace cudacore
