// The one reader of GPU code files (src/code: elf_view, fatbin_reader, archive_reader,
// nv_info_records, bounded_read) on its own, on bytes nobody validated: what it finds, what it
// refuses, and that its lenient users (parameter counts, arch fit) read what it reads.
#include "crafted_code.hpp"
#include "test_support.hpp"

#include "code/archive_reader.hpp"
#include "code/bounded_read.hpp"
#include "code/elf_view.hpp"
#include "code/fatbin_reader.hpp"
#include "code/kernel_parameter_count.hpp"
#include "code/nv_info_records.hpp"
#include "runtime/code_arch_fit.hpp"

#include <string>
#include <vector>

namespace {

using namespace cudacore;
using namespace cudacore::detail;

std::string malformed_detail(auto&& read) {
    try {
        read();
    } catch (const MalformedBytes& malformed) {
        return malformed.detail;
    }
    return "(accepted)";
}

// .nv.info.<kernel> records: a record of format 1 (4 bytes in all), then one EIATTR_KPARAM_INFO
// per parameter (ordinal, offset, size) and the parameter bank's size.
std::string parameter_records(const std::vector<std::pair<std::uint16_t, std::uint32_t>>& parameters,
                              std::uint16_t bank) {
    std::string records;
    auto record = [&](std::uint8_t format, std::uint8_t attribute, std::string payload) {
        const std::size_t at = records.size();
        test::put_at<std::uint8_t>(records, at, format);
        test::put_at<std::uint8_t>(records, at + 1, attribute);
        test::put_at<std::uint16_t>(records, at + 2, format == 4 ? payload.size() : 0);
        records += payload;
    };
    record(1, 0x33, "");
    std::uint16_t offset = 0;
    for (std::uint16_t ordinal = 0; ordinal < parameters.size(); ++ordinal) {
        std::string payload(12, '\0');
        test::put_at<std::uint16_t>(payload, 4, parameters[ordinal].first);
        test::put_at<std::uint16_t>(payload, 6, offset);
        test::put_at<std::uint32_t>(payload, 8, parameters[ordinal].second << 18);
        offset += parameters[ordinal].second;
        record(4, 0x17, payload);
    }
    std::string bank_payload(8, '\0');
    test::put_at<std::uint16_t>(bank_payload, 6, bank);
    record(4, 0x0a, bank_payload);
    return records;
}

TEST(CodeReader, ElfViewFindsSectionsAndSymbolNamesInUnvalidatedBytes) {
    std::string symbols(2 * sizeof(Elf64_Sym), '\0');
    Elf64_Sym named{};
    named.st_name = 1;  // "scale"
    std::memcpy(symbols.data(), &named, sizeof named);
    Elf64_Sym outside{};
    outside.st_name = 1000;  // past the string table
    std::memcpy(symbols.data() + sizeof named, &outside, sizeof outside);
    const std::string cubin = test::craft_elf({
        {.name = ".strtab", .type = SHT_STRTAB, .data = std::string("\0scale\0", 7)},
        {.name = ".symtab", .type = SHT_SYMTAB, .data = symbols, .link = 2,
         .entry_size = sizeof(Elf64_Sym)},
        {.name = ".nv.info.scale", .type = SHT_LOPROC, .data = "data"},
    });
    const ElfView<Elf64Types> elf(cubin);
    EXPECT_TRUE(elf.is_cubin());
    EXPECT_EQ(elf.sections().size(), 5u);
    EXPECT_EQ(elf.section_name(4), ".nv.info.scale");
    const Elf64_Shdr* info = elf.find_section(".nv.info.scale");
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(elf.contents(*info), "data");
    EXPECT_EQ(elf.find_section(".nv.info"), nullptr) << "a prefix is not the name";
    std::vector<std::optional<std::string_view>> names;
    elf.for_each_symbol(elf.sections()[3], [&](const Elf64_Sym&, const auto& name_of) { names.push_back(name_of()); });
    ASSERT_EQ(names.size(), 2u);
    EXPECT_EQ(names[0], "scale");
    EXPECT_EQ(names[1], std::nullopt) << "a name outside its string table is none, not a read past it";

    // The same bytes where the section table is not aligned: read from a copy, the same answers.
    std::string shifted = " " + cubin;
    const ElfView<Elf64Types> unaligned(std::string_view(shifted).substr(1));
    EXPECT_EQ(unaligned.section_name(4), ".nv.info.scale");
}

TEST(CodeReader, ElfViewRefusesTablesOutOfPlaceWithValidationsWords) {
    std::string cubin = test::minimal_cubin();
    test::put_at<std::uint64_t>(cubin, offsetof(Elf64_Ehdr, e_shoff), cubin.size() - 8);
    EXPECT_EQ(malformed_detail([&] { ElfView<Elf64Types> elf(cubin); }),
              "section header table at offset " + std::to_string(cubin.size() - 8) + " runs past the end");
    cubin = test::minimal_cubin();
    test::put_at<std::uint16_t>(cubin, offsetof(Elf64_Ehdr, e_shstrndx), 9);
    EXPECT_EQ(malformed_detail([&] { ElfView<Elf64Types> elf(cubin); }),
              "section name table index 9 out of range (2 sections)");
    EXPECT_EQ(malformed_detail([] { elf_class("\x7f" "ELF"); }), "no ELF magic");
}

TEST(CodeReader, ParameterCountsReadTheAttributeRecordsTheValidatorChecks) {
    const std::string records = parameter_records({{0, 8}, {1, 4}}, 12);
    const std::string cubin = test::craft_elf({{.name = ".nv.info.k", .type = SHT_LOPROC, .data = records}});
    EXPECT_EQ(cubin_kernel_parameter_count(cubin, "k"), 2u);
    EXPECT_EQ(cubin_kernel_parameter_count(cubin, "other"), std::nullopt);
    // A parameter beyond the bank, or a record cut short: the code does not say.
    const std::string beyond =
        test::craft_elf({{.name = ".nv.info.k", .type = SHT_LOPROC, .data = parameter_records({{0, 8}}, 4)}});
    EXPECT_EQ(cubin_kernel_parameter_count(beyond, "k"), std::nullopt);
    const std::string cut = test::craft_elf(
        {{.name = ".nv.info.k", .type = SHT_LOPROC, .data = records.substr(0, records.size() - 3)}});
    EXPECT_EQ(cubin_kernel_parameter_count(cut, "k"), std::nullopt);
    std::vector<std::uint8_t> attributes;
    for_each_nv_info_record(records, [] { return std::string("records"); },
                            [&](const NvInfoRecord& record) { attributes.push_back(record.attribute); });
    EXPECT_EQ(attributes, (std::vector<std::uint8_t>{0x33, 0x17, 0x17, 0x0a}));
    EXPECT_EQ(malformed_detail([&] {
                  for_each_nv_info_record(records.substr(0, records.size() - 3),
                                          [] { return std::string("records"); }, [](const NvInfoRecord&) {});
              }),
              "attribute record at offset 36 of records (8 bytes) runs past the section");
}

TEST(CodeReader, FatbinWalkAndArchFitSeeTheSameEntries) {
    const std::string cubin = test::minimal_cubin();
    const std::string fatbin = test::fatbin_around(cubin, 90);
    std::vector<FatbinImage> images;
    for_each_fatbin_image(fatbin, [&](const FatbinImage& image, const std::string& where) {
        EXPECT_EQ(where, "entry 0 at offset 16");
        images.push_back(image);
    });
    ASSERT_EQ(images.size(), 1u);
    EXPECT_EQ(images[0].kind, kFatbinElf);
    EXPECT_EQ(images[0].sm, 90u);
    EXPECT_EQ(images[0].payload, cubin);
    EXPECT_EQ(fatbin_arch_fit(fatbin, 9, 0), ArchFit::runs);
    EXPECT_EQ(fatbin_arch_fit(fatbin, 8, 0), ArchFit::cannot_run);
    EXPECT_EQ(fatbin_arch_fit(test::fatbin_around("ptx", 90, 1), 8, 0), ArchFit::ask_driver);
    EXPECT_EQ(cubin_arch_fit(cubin, 9, 0), ArchFit::runs);
    EXPECT_EQ(fatbin_arch_fit(test::wrapping_fatbin(), 9, 0), ArchFit::ask_driver);
}

TEST(CodeReader, ArchiveWalkSkipsTheSymbolIndexAndChecksIt) {
    auto header = [](std::string name, std::size_t size) {
        std::string h = name;
        h.resize(16, ' ');
        h += std::string(32, ' ');  // dates, owner, group, mode
        std::string digits = std::to_string(size);
        digits.resize(10, ' ');
        return h + digits + "`\n";
    };
    std::string index(8, '\0');
    index[3] = 1;           // one symbol
    index[7] = 8;           // at offset 8: the first member header
    const std::string archive = "!<arch>\n" + header("/", index.size()) + index + header("a.o/", 3) + "abc\n";
    std::vector<std::string> names;
    for_each_archive_member(archive, [&](const ArchiveMember& member, const std::string& where) {
        names.push_back(member.name + " " + std::string(member.bytes) + " " + where);
    });
    EXPECT_EQ(names, (std::vector<std::string>{"a.o/ abc member 1 at offset 76"}));
    std::string pointing_past = archive;
    pointing_past[8 + 60 + 7] = 127;
    EXPECT_EQ(malformed_detail([&] { for_each_archive_member(pointing_past, [](auto&&, auto&&) {}); }),
              "member 0 at offset 8: symbol index entry 0 points past the end");
}

}  // namespace
