#include "code/kernel_parameter_count.hpp"

#include "code/code_validation.hpp"

#include <elf.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace cudacore::detail {

namespace {

// .nv.info records: a format byte, an attribute byte, then a value whose size the format gives.
constexpr std::uint8_t kFormatNoValue = 0x01;     // 2 bytes in all
constexpr std::uint8_t kFormatByteValue = 0x02;   // 4 bytes in all (padded)
constexpr std::uint8_t kFormatHalfValue = 0x03;   // 4 bytes in all
constexpr std::uint8_t kFormatSizedValue = 0x04;  // 4 bytes, then a 16-bit size of payload
constexpr std::uint8_t kAttributeParamBank = 0x0a;   // EIATTR_PARAM_CBANK: ..., u16 bank size
constexpr std::uint8_t kAttributeParamInfo = 0x17;   // EIATTR_KPARAM_INFO: one per parameter

template <class T>
bool read(std::string_view bytes, std::size_t offset, T& out) noexcept {
    if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return false;
    std::memcpy(&out, bytes.data() + offset, sizeof(T));
    return true;
}

// The contents of the section named `wanted`, or nullopt.
std::optional<std::string_view> elf_section(std::string_view elf, std::string_view wanted) noexcept {
    Elf64_Ehdr header;
    if (!read(elf, 0, header) || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 ||
        header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_shentsize != sizeof(Elf64_Shdr) ||
        header.e_shstrndx >= header.e_shnum)
        return std::nullopt;
    auto section_header = [&](std::size_t index, Elf64_Shdr& out) {
        return read(elf, header.e_shoff + index * sizeof(Elf64_Shdr), out);
    };
    auto contents = [&](const Elf64_Shdr& section) -> std::optional<std::string_view> {
        if (section.sh_offset > elf.size() || elf.size() - section.sh_offset < section.sh_size)
            return std::nullopt;
        return elf.substr(section.sh_offset, section.sh_size);
    };
    Elf64_Shdr names_header;
    if (!section_header(header.e_shstrndx, names_header)) return std::nullopt;
    const std::optional<std::string_view> names = contents(names_header);
    if (!names) return std::nullopt;
    for (std::size_t index = 0; index < header.e_shnum; ++index) {
        Elf64_Shdr section;
        if (!section_header(index, section)) return std::nullopt;
        if (section.sh_name >= names->size()) continue;
        const std::string_view rest = names->substr(section.sh_name);
        const std::string_view name = rest.substr(0, rest.find('\0'));
        if (name == wanted) return contents(section);
    }
    return std::nullopt;
}

}  // namespace

std::optional<std::size_t> cubin_kernel_parameter_count(std::string_view cubin,
                                                        std::string_view lowered_name) noexcept {
    try {
        const std::optional<std::string_view> info =
            elf_section(cubin, ".nv.info." + std::string(lowered_name));
        if (!info) return std::nullopt;
        struct Parameter {
            std::uint16_t ordinal, offset;
            std::uint32_t size;
        };
        std::vector<Parameter> parameters;
        std::optional<std::uint32_t> bank_size;
        for (std::size_t at = 0; at < info->size();) {
            std::uint8_t format = 0, attribute = 0;
            if (!read(*info, at, format) || !read(*info, at + 1, attribute)) return std::nullopt;
            if (format == kFormatNoValue) {
                at += 2;
                continue;
            }
            if (format == kFormatByteValue || format == kFormatHalfValue) {
                at += 4;
                continue;
            }
            if (format != kFormatSizedValue) return std::nullopt;  // unknown: do not guess
            std::uint16_t size = 0;
            if (!read(*info, at + 2, size) || info->size() - (at + 4) < size) return std::nullopt;
            const std::string_view payload = info->substr(at + 4, size);
            if (attribute == kAttributeParamInfo) {
                std::uint16_t ordinal = 0, offset = 0;
                std::uint32_t flags = 0;
                if (!read(payload, 4, ordinal) || !read(payload, 6, offset) ||
                    !read(payload, 8, flags))
                    return std::nullopt;
                parameters.push_back({ordinal, offset, flags >> 18});
            } else if (attribute == kAttributeParamBank) {
                std::uint16_t bank = 0;
                if (!read(payload, 6, bank)) return std::nullopt;
                bank_size = bank;
            }
            at += 4 + size;
        }
        // Every ordinal 0..n-1 once, and the parameters filling the parameter bank (up to the
        // padding of its end), so that no parameter is missed.
        if (parameters.empty()) return std::size_t{0};
        if (!bank_size) return std::nullopt;
        std::vector<bool> seen(parameters.size(), false);
        std::uint32_t end = 0;
        for (const Parameter& parameter : parameters) {
            if (parameter.ordinal >= seen.size() || seen[parameter.ordinal]) return std::nullopt;
            seen[parameter.ordinal] = true;
            end = std::max(end, std::uint32_t{parameter.offset} + parameter.size);
        }
        if (end > *bank_size || *bank_size - end >= 8) return std::nullopt;
        return parameters.size();
    } catch (...) {
        return std::nullopt;
    }
}

std::optional<std::size_t> ptx_kernel_parameter_count(std::string_view ptx,
                                                      std::string_view lowered_name) noexcept {
    auto is_name_char = [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.';
    };
    std::optional<std::size_t> found;
    for (std::size_t at = ptx.find(".entry"); at != std::string_view::npos;
         at = ptx.find(".entry", at + 6)) {
        std::size_t name_start = at + 6;
        while (name_start < ptx.size() && std::isspace(static_cast<unsigned char>(ptx[name_start])))
            ++name_start;
        std::size_t name_end = name_start;
        while (name_end < ptx.size() && is_name_char(ptx[name_end])) ++name_end;
        if (ptx.substr(name_start, name_end - name_start) != lowered_name) continue;
        if (found) return std::nullopt;  // declared twice: do not guess
        std::size_t next = name_end;
        while (next < ptx.size() && std::isspace(static_cast<unsigned char>(ptx[next]))) ++next;
        if (next >= ptx.size() || ptx[next] != '(') {
            found = 0;  // no parameter list
            continue;
        }
        const std::size_t close = ptx.find(')', next);
        if (close == std::string_view::npos) return std::nullopt;
        const std::string_view list = ptx.substr(next + 1, close - next - 1);
        std::size_t count = 0;
        for (std::size_t p = list.find(".param"); p != std::string_view::npos;
             p = list.find(".param", p + 6))
            ++count;
        found = count;
    }
    return found;
}

std::optional<std::size_t> fatbin_kernel_parameter_count(std::string_view fatbin,
                                                         std::string_view lowered_name) noexcept {
    constexpr std::uint16_t kPtx = 1, kElf = 2;
    try {
        // Every image holds the same kernels with the same parameters: the first uncompressed
        // one that says is enough (compressed images are not unpacked for this).
        for (const FatbinImage& image : fatbin_images(fatbin)) {
            if (image.compressed) continue;
            std::optional<std::size_t> count;
            if (image.kind == kElf) count = cubin_kernel_parameter_count(image.payload, lowered_name);
            if (image.kind == kPtx) count = ptx_kernel_parameter_count(image.payload, lowered_name);
            if (count) return count;
        }
    } catch (...) {
        // A malformed fatbin says nothing (loading it is refused elsewhere).
    }
    return std::nullopt;
}

std::optional<std::size_t> kernel_parameter_count(CodeType type, std::string_view code,
                                                  std::string_view lowered_name) noexcept {
    switch (type) {
        case CodeType::cubin: return cubin_kernel_parameter_count(code, lowered_name);
        case CodeType::ptx: return ptx_kernel_parameter_count(code, lowered_name);
        case CodeType::fatbin: return fatbin_kernel_parameter_count(code, lowered_name);
        default: return std::nullopt;
    }
}

}  // namespace cudacore::detail
