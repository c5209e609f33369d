#include "cudacore/code_inspection.hpp"

#include "cudacore/errors.hpp"
#include "code/bounded_read.hpp"
#include "code/code_magic.hpp"
#include "code/code_validation.hpp"
#include "code/cuda_elf.hpp"
#include "code/elf_view.hpp"

#include <elf.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace cudacore {

namespace {

using detail::kEmCuda;
using detail::kFatbinMagic;
using detail::kLtoIrMagic;
using detail::try_read_at;

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

// The arch a cubin's header states ("sm_90"), or "".
std::string cubin_arch(std::string_view cubin) {
    Elf64_Ehdr header{};
    if (!detail::read_cubin_header(cubin, header)) return {};
    const unsigned sm = detail::cubin_sm(header);
    return sm ? "sm_" + std::to_string(sm) : std::string();
}

}  // namespace

std::optional<CodeType> try_detect_code_type(std::string_view code) noexcept {
    std::uint32_t magic = 0;
    if (try_read_at(code, 0, magic)) {
        if (magic == kFatbinMagic) return CodeType::fatbin;
        if (magic == kLtoIrMagic) return CodeType::ltoir;
    }
    if (starts_with(code, "\x7f" "ELF")) {
        std::uint16_t machine = 0;
        if (!try_read_at(code, offsetof(Elf64_Ehdr, e_machine), machine)) return std::nullopt;
        return machine == kEmCuda ? CodeType::cubin : CodeType::object;
    }
    if (starts_with(code, "!<arch>\n")) return CodeType::library;
    if (looks_like_ptx(code)) return CodeType::ptx;
    return std::nullopt;
}

CodeType detect_code_type(std::string_view code) {
    if (auto type = try_detect_code_type(code)) return *type;
    throw InvalidArgumentError("unrecognised code (" + std::to_string(code.size()) +
                               " bytes, starting " + detail::hex_start(code) +
                               "): not a cubin, fatbin, PTX, LTO-IR, object or library");
}

namespace {

// Text scanning by hand, not std::regex: libstdc++'s regex recurses per character matched, so
// a long identifier in untrusted PTX overflows the stack. Each scan below is linear.

bool is_space(char c) noexcept {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}
bool is_lower(char c) noexcept { return c >= 'a' && c <= 'z'; }
bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
bool is_identifier_start(char c) noexcept {
    return (c >= 'A' && c <= 'Z') || is_lower(c) || c == '_' || c == '$' || c == '%';
}
bool is_identifier_char(char c) noexcept { return is_identifier_start(c) || is_digit(c); }

std::size_t skip_spaces(std::string_view text, std::size_t at) noexcept {
    while (at < text.size() && is_space(text[at])) ++at;
    return at;
}

// After each `directive` followed by white space, `value` is asked to match at that point
// (returning the end of what it matched, or npos); the first match is returned.
template <typename Match>
std::string_view after_directive(std::string_view text, std::string_view directive, Match value) {
    for (std::size_t at = text.find(directive); at != std::string_view::npos;
         at = text.find(directive, at + 1)) {
        const std::size_t start = at + directive.size();
        const std::size_t begin = skip_spaces(text, start);
        if (begin == start) continue;  // "\s+": at least one space
        const std::size_t end = value(text, begin);
        if (end != std::string_view::npos) return text.substr(begin, end - begin);
    }
    return {};
}

// sm_90, sm_90a, compute_100f: [a-z]+_[0-9]+[a-z]?
std::size_t match_arch(std::string_view text, std::size_t at) noexcept {
    std::size_t i = at;
    while (i < text.size() && is_lower(text[i])) ++i;
    if (i == at || i >= text.size() || text[i] != '_') return std::string_view::npos;
    const std::size_t digits = ++i;
    while (i < text.size() && is_digit(text[i])) ++i;
    if (i == digits) return std::string_view::npos;
    if (i < text.size() && is_lower(text[i])) ++i;
    return i;
}

// 8.8: [0-9]+\.[0-9]+
std::size_t match_version(std::string_view text, std::size_t at) noexcept {
    std::size_t i = at;
    while (i < text.size() && is_digit(text[i])) ++i;
    if (i == at || i >= text.size() || text[i] != '.') return std::string_view::npos;
    const std::size_t minor = ++i;
    while (i < text.size() && is_digit(text[i])) ++i;
    return i == minor ? std::string_view::npos : i;
}

// The names of the ELF's symbols that `wanted` accepts, appended to `names`; `budget` bounds
// the bytes copied in all (a string table may be shared by any number of symbols, so names
// alone do not bound it). The ELF has been validated: every table and name is in bounds and
// terminated.
template <class Wanted>
void append_cubin_symbol_names(std::string_view cubin, std::vector<std::string>& names,
                               std::size_t& budget, Wanted wanted, const char* what) {
    const detail::ElfView<detail::Elf64Types> elf(cubin);
    for (const Elf64_Shdr& section : elf.sections().subspan(1)) {  // section 0 is reserved
        if (section.sh_type != SHT_SYMTAB) continue;
        elf.for_each_symbol(section, [&](const Elf64_Sym& symbol, const auto& name_of) {
            if (!wanted(symbol)) return;
            const std::optional<std::string_view> name = name_of();
            if (!name) return;  // no name: st_name 0 in an empty table
            if (name->size() > budget)
                malformed("cubin", cubin, std::string(what) + " names exceed the work limit (" +
                                              std::to_string(names.size()) + " names so far)");
            budget -= name->size();
            names.emplace_back(*name);
        });
    }
}

bool is_kernel_symbol(const Elf64_Sym& symbol) noexcept {
    return ELF64_ST_TYPE(symbol.st_info) == STT_FUNC && (symbol.st_other & detail::kStoCudaEntry);
}

void append_cubin_kernel_names(std::string_view cubin, std::vector<std::string>& names,
                               std::size_t& budget) {
    append_cubin_symbol_names(cubin, names, budget, is_kernel_symbol, "kernel");
}

// Kernel names may take at most this many bytes per byte of input (sound cubins hold each
// name once, in their string table; the slack allows for names sharing a tail).
constexpr std::size_t kNameBytesPerInputByte = 2;

}  // namespace

std::vector<std::string> ptx_kernel_names(std::string_view ptx) {
    // ".visible .entry name(" / ".entry name (" — one per kernel.
    constexpr std::string_view kEntry = ".entry";
    std::vector<std::string> names;
    std::size_t at = ptx.find(kEntry);
    while (at != std::string_view::npos) {
        const std::size_t after = at + kEntry.size();
        std::size_t begin = skip_spaces(ptx, after);
        std::size_t end = begin;
        if (begin > after && begin < ptx.size() && is_identifier_start(ptx[begin])) {
            end = begin + 1;
            while (end < ptx.size() && is_identifier_char(ptx[end])) ++end;
            const std::size_t paren = skip_spaces(ptx, end);
            if (paren < ptx.size() && ptx[paren] == '(')
                names.emplace_back(ptx.substr(begin, end - begin));
        }
        // Resume after what was scanned, so that every byte is looked at a bounded number of times.
        at = ptx.find(kEntry, std::max(end, at + 1));
    }
    return names;
}

std::vector<std::string> cubin_kernel_names(std::string_view cubin) {
    detail::validate_code(CodeType::cubin, cubin);
    std::vector<std::string> names;
    std::size_t budget = kNameBytesPerInputByte * cubin.size();
    append_cubin_kernel_names(cubin, names, budget);
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return names;
}

std::vector<std::string> cubin_global_names(std::string_view cubin) {
    detail::validate_code(CodeType::cubin, cubin);
    std::vector<std::string> names;
    std::size_t budget = kNameBytesPerInputByte * cubin.size();
    // A whole-program cubin gives its variables local binding: every defined object counts,
    // except the compiler's own ("$str" literals, ".nv..." reservations).
    append_cubin_symbol_names(cubin, names, budget, [](const Elf64_Sym& symbol) {
        return ELF64_ST_TYPE(symbol.st_info) == STT_OBJECT && symbol.st_shndx != SHN_UNDEF;
    }, "global");
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    std::erase_if(names, [](const std::string& name) {
        return name.empty() || name[0] == '$' || name[0] == '.';
    });
    return names;
}

CodeInfo inspect_code(std::string_view code) {
    CodeInfo info;
    info.type = detect_code_type(code);
    info.size = code.size();
    // Sound structure first: what follows reads tables the validation has checked.
    detail::validate_code(info.type, code);
    switch (info.type) {
        case CodeType::cubin: {
            info.arch = cubin_arch(code);
            std::size_t budget = kNameBytesPerInputByte * code.size();
            append_cubin_kernel_names(code, info.kernels, budget);
            std::sort(info.kernels.begin(), info.kernels.end());
            break;
        }
        case CodeType::ptx: {
            const std::string_view head = code.substr(0, 64 * 1024);
            info.arch = after_directive(head, ".target", match_arch);
            info.ptx_version = after_directive(head, ".version", match_version);
            info.kernels = ptx_kernel_names(code);
            break;
        }
        case CodeType::fatbin: {
            std::size_t budget = kNameBytesPerInputByte * code.size();
            for (const detail::FatbinImage& image : detail::fatbin_images(code)) {
                FatbinEntry entry;
                entry.kind = image.kind == detail::kFatbinPtx     ? "ptx"
                             : image.kind == detail::kFatbinElf   ? "elf"
                             : image.kind == detail::kFatbinLtoIr ? "ltoir"
                                               : "kind " + std::to_string(image.kind);
                // The number is a real arch for ELF, a virtual one for PTX and LTO-IR: named as
                // nvcc's -gencode names them.
                entry.arch = (image.kind == detail::kFatbinPtx     ? "compute_"
                              : image.kind == detail::kFatbinLtoIr ? "lto_"
                                                                   : "sm_") +
                             std::to_string(image.sm);
                entry.size = image.payload.size();
                entry.compressed = image.compressed;
                // Uncompressed ELF images were validated with the fatbin.
                if (!image.compressed && image.kind == detail::kFatbinElf)
                    append_cubin_kernel_names(image.payload, info.kernels, budget);
                info.entries.push_back(std::move(entry));
            }
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
