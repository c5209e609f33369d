#include "code/kernel_parameter_count.hpp"

#include "code/bounded_read.hpp"
#include "code/code_validation.hpp"
#include "code/elf_view.hpp"
#include "code/fatbin_reader.hpp"
#include "code/nv_info_records.hpp"

#include <elf.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>
#include <vector>

namespace cudacore::detail {

namespace {

constexpr std::uint8_t kAttributeParamBank = 0x0a;   // EIATTR_PARAM_CBANK: ..., u16 bank size
constexpr std::uint8_t kAttributeParamInfo = 0x17;   // EIATTR_KPARAM_INFO: one per parameter

}  // namespace

std::optional<std::size_t> cubin_kernel_parameter_count(std::string_view cubin,
                                                        std::string_view lowered_name) noexcept {
    try {
        if (elf_class(cubin) != ELFCLASS64) return std::nullopt;
        const ElfView<Elf64Types> elf(cubin);
        const Elf64_Shdr* info = elf.find_section(".nv.info." + std::string(lowered_name));
        if (!info || !in_bounds(info->sh_offset, info->sh_size, cubin.size())) return std::nullopt;
        struct Parameter {
            std::uint16_t ordinal, offset;
            std::uint32_t size;
        };
        std::vector<Parameter> parameters;
        std::optional<std::uint32_t> bank_size;
        bool complete = true;  // every record of interest whole
        for_each_nv_info_record(elf.contents(*info), [] { return std::string(); },
                                [&](const NvInfoRecord& record) {
            if (record.attribute == kAttributeParamInfo && record.format == kNvInfoSizedValue) {
                std::uint16_t ordinal = 0, offset = 0;
                std::uint32_t flags = 0;
                complete = complete && try_read_at(record.payload, 4, ordinal) &&
                           try_read_at(record.payload, 6, offset) && try_read_at(record.payload, 8, flags);
                parameters.push_back({ordinal, offset, flags >> 18});
            } else if (record.attribute == kAttributeParamBank && record.format == kNvInfoSizedValue) {
                std::uint16_t bank = 0;
                complete = complete && try_read_at(record.payload, 6, bank);
                bank_size = bank;
            }
        });
        if (!complete) return std::nullopt;
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
        return std::nullopt;  // malformed (MalformedBytes) or out of memory: the code says nothing
    }
}

std::optional<std::size_t> ptx_kernel_parameter_count(std::string_view ptx,
                                                      std::string_view lowered_name) noexcept {
    auto is_name_char = [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.';
    };
    std::optional<std::size_t> found;
    // Each search resumes after the name it read, so that no byte is read twice (".entry.entry..."
    // would otherwise read its run again from each occurrence).
    std::size_t resume = 0;
    for (std::size_t at = ptx.find(".entry"); at != std::string_view::npos; at = ptx.find(".entry", resume)) {
        std::size_t name_start = at + 6;
        while (name_start < ptx.size() && std::isspace(static_cast<unsigned char>(ptx[name_start])))
            ++name_start;
        std::size_t name_end = name_start;
        while (name_end < ptx.size() && is_name_char(ptx[name_end])) ++name_end;
        resume = std::max(name_end, at + 6);
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
    try {
        // Every image holds the same kernels with the same parameters: the first uncompressed
        // one that says is enough (compressed images are not unpacked for this).
        for (const FatbinImage& image : fatbin_images(fatbin)) {
            if (image.compressed) continue;
            std::optional<std::size_t> count;
            if (image.kind == kFatbinElf) count = cubin_kernel_parameter_count(image.payload, lowered_name);
            if (image.kind == kFatbinPtx) count = ptx_kernel_parameter_count(image.payload, lowered_name);
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
