// Structural validation of binary code: well-formed code of every type passes; malformed code
// is an InvalidArgumentError naming the input and what is wrong, from the validator, from Linker
// and from ObjectCode loading (before any driver call, so on a machine without one), whether the
// bytes come from memory or from a deserialized ObjectCode.
#include "crafted_code.hpp"
#include "test_support.hpp"

#include "cudacore/code_inspection.hpp"
#include "cudacore/cached_compile.hpp"
#include "cudacore/disk_program_cache.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/linker.hpp"
#include "cudacore/program.hpp"
#include "code/code_validation.hpp"
#include "code/object_code_state.hpp"

#include <ar.h>

#include <cstdio>
#include <filesystem>
#include <map>

namespace {

using namespace cudacore;
using cudacore::detail::validate_code;
using cudacore::test::craft_elf;
using cudacore::test::CraftedSection;
using cudacore::test::get_at;
using cudacore::test::put_at;

constexpr const char* kSource = R"(
__device__ int counter;
extern "C" __global__ void first(int* p) { *p = 1 + counter; }
extern "C" __global__ void second(int* p) { atomicAdd(&counter, *p); }
)";

ObjectCode compile(CodeType target, bool relocatable = false) {
    ProgramOptions options;
    options.arch = "sm_90";
    if (relocatable) options.relocatable_device_code = true;
    return Program(kSource, SourceType::cxx, options).compile(target);
}

const std::string& real_cubin() {
    static const std::string cubin(compile(CodeType::cubin).code());
    return cubin;
}

// The message of the InvalidArgumentError that `f` throws ("" when it throws none).
template <typename F>
std::string refusal(F&& f) {
    try {
        f();
    } catch (const InvalidArgumentError& e) {
        return e.what();
    }
    return {};
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// One ELF image in a fatbin, as the toolkit lays it out.
std::string fatbin_around(const std::string& image, std::uint16_t kind = 2) {
    std::string entry;
    put_at<std::uint16_t>(entry, 0, kind);
    put_at<std::uint16_t>(entry, 2, 0x0101);
    put_at<std::uint32_t>(entry, 4, 64);
    put_at<std::uint64_t>(entry, 8, image.size());
    put_at<std::uint32_t>(entry, 28, 90);
    put_at<std::uint64_t>(entry, 40, 0x11);
    entry.resize(64, '\0');
    std::string fatbin;
    put_at<std::uint32_t>(fatbin, 0, 0xBA55ED50);
    put_at<std::uint16_t>(fatbin, 4, 1);
    put_at<std::uint16_t>(fatbin, 6, 16);
    put_at<std::uint64_t>(fatbin, 8, entry.size() + image.size());
    return fatbin + entry + image;
}

// An ar archive of the given members (name, bytes).
std::string archive_of(const std::vector<std::pair<std::string, std::string>>& members) {
    std::string archive = ARMAG;
    for (const auto& [name, bytes] : members) {
        char header[sizeof(ar_hdr) + 1];
        std::snprintf(header, sizeof header, "%-16s%-12s%-6s%-6s%-8s%-10zu`\n", (name + "/").c_str(),
                      "0", "0", "0", "644", bytes.size());
        archive.append(header, sizeof(ar_hdr));
        archive += bytes;
        if (bytes.size() % 2) archive += '\n';
    }
    return archive;
}

TEST(CodeValidation, WellFormedCodeOfEveryTypePasses) {
    EXPECT_NO_THROW(validate_code(CodeType::cubin, real_cubin(), "k.cubin"));
    EXPECT_NO_THROW(validate_code(CodeType::cubin, compile(CodeType::cubin, true).code()));
    EXPECT_NO_THROW(validate_code(CodeType::ltoir, compile(CodeType::ltoir, true).code()));
    EXPECT_NO_THROW(validate_code(CodeType::ptx, compile(CodeType::ptx).code()));
    EXPECT_NO_THROW(validate_code(CodeType::fatbin, fatbin_around(real_cubin())));
    // Any host ELF is an object; this test's own executable will do.
    const std::string self = test::read_file("/proc/self/exe");
    EXPECT_NO_THROW(validate_code(CodeType::object, self));
    EXPECT_NO_THROW(validate_code(CodeType::library,
                                  archive_of({{"k.cubin", real_cubin()}, {"odd.txt", "odd"}})));
    EXPECT_NO_THROW(validate_code(CodeType::library, ARMAG));  // an empty archive
    EXPECT_NO_THROW(validate_code(CodeType::cubin, test::minimal_cubin()));
    // Valid inputs make a Linker (linking them needs nvJitLink, not tested here).
    EXPECT_NO_THROW(Linker({ObjectCode::from_cubin(real_cubin(), "k.cubin")}));
}

TEST(CodeValidation, FatbinsFromTheToolkitPassWhenPresent) {
    const std::filesystem::path tool = "/usr/local/cuda/bin/fatbinary";
    if (!std::filesystem::exists(tool)) GTEST_SKIP() << "no " << tool;
    test::TempDir dir;
    test::write_file(dir.path() / "k.cubin", real_cubin());
    test::write_file(dir.path() / "k.ptx", std::string(compile(CodeType::ptx).code()));
    for (const char* compress : {"", "--compress-all"}) {
        std::vector<std::string> argv = {tool.string(), "--create=" + (dir.path() / "x.fatbin").string(),
                                         "--image3=kind=elf,sm=90,file=" + (dir.path() / "k.cubin").string(),
                                         "--image3=kind=ptx,sm=90,file=" + (dir.path() / "k.ptx").string()};
        if (*compress) argv.push_back(compress);
        auto result = test::run_process(argv);
        ASSERT_EQ(result.exit_code, 0) << result.err;
        const std::string fatbin = test::read_file(dir.path() / "x.fatbin");
        EXPECT_NO_THROW(validate_code(CodeType::fatbin, fatbin)) << compress;
        const CodeInfo info = inspect_code(fatbin);
        ASSERT_EQ(info.entries.size(), 2u);
        EXPECT_EQ(info.entries[0].compressed, *compress != '\0');
    }
}

// The two files of the report: an ELF magic then 64 KiB of random bytes (crashed nvJitLink),
// and the first 100 bytes of a real cubin (linked into an empty cubin). Each is refused by the
// validator, by Linker and by loading, naming the input; loading fails before any driver call
// (this machine may have none: the error is still InvalidArgumentError, not NoDriverError).
TEST(CodeValidation, FakeAndTruncatedCubinsAreRefusedByLinkerAndLoading) {
    const std::map<std::string, std::string> inputs = {{"fake.cubin", test::fake_elf()},
                                                       {"trunc.cubin", real_cubin().substr(0, 100)}};
    for (const auto& [name, bytes] : inputs) {
        const auto detected = try_detect_code_type(bytes);
        ASSERT_TRUE(detected.has_value()) << name;
        for (const CodeType type : {*detected, CodeType::cubin}) {
            const std::string what = std::string(to_string(type)) + " '" + name + "'";
            const std::string direct = refusal([&, &bytes = bytes, &name = name] { validate_code(type, bytes, name); });
            EXPECT_TRUE(contains(direct, "malformed " + what)) << direct;

            const ObjectCode code = ObjectCode::from_bytes(type, bytes, name);
            const std::string linker = refusal([&] { Linker({code}, LinkerOptions{.arch = "sm_90"}); });
            EXPECT_TRUE(contains(linker, "input 0")) << linker;
            EXPECT_TRUE(contains(linker, "malformed " + what)) << linker;

            if (type != CodeType::cubin) continue;  // objects are refused for needing a link
            const std::string loading = refusal([&] { code.get_kernel("k"); });
            EXPECT_TRUE(contains(loading, "cannot load " + what)) << loading;
            EXPECT_TRUE(contains(loading, "malformed cubin")) << loading;
            EXPECT_FALSE(code.is_loaded());
            // Deserialized code: its checksum is sound, its contents are not.
            const ObjectCode revived = ObjectCode::deserialize(code.serialize());
            EXPECT_TRUE(contains(refusal([&] { revived.load(); }), "malformed cubin"));
        }
    }
    // What is wrong, in words.
    EXPECT_TRUE(contains(refusal([&] { validate_code(CodeType::cubin, real_cubin().substr(0, 100)); }),
                         "section header table"));
    EXPECT_TRUE(contains(refusal([&] { validate_code(CodeType::object, test::fake_elf()); }),
                         "ELF"));
}

// Only bytes NVRTC made in this process skip the walk at load; the same bytes from anywhere else
// (a copy, a deserialized value, a disk cache hit) are validated before the driver sees them.
TEST(CodeValidation, OnlyBytesNvrtcMadeHereSkipTheWalkAtLoad) {
    auto made_here = [](const ObjectCode& code) {
        return detail::ObjectCodeAccess::state(code)->made_by_nvrtc;
    };
    const ObjectCode compiled = compile(CodeType::cubin);
    EXPECT_TRUE(made_here(compiled));
    EXPECT_TRUE(made_here(ObjectCode(compiled)));  // a copy shares the value
    EXPECT_FALSE(made_here(ObjectCode::from_cubin(std::string(compiled.code()), "copy.cubin")));
    EXPECT_FALSE(made_here(ObjectCode::deserialize(compiled.serialize())));

    test::TempDir folder;
    ProgramOptions options;
    options.arch = "sm_90";
    for (int round = 0; round < 2; ++round) {
        DiskProgramCache cache(folder.path() / "cache");
        Program program(kSource, SourceType::cxx, options);
        const ObjectCode code = compile_cached(program, CodeType::cubin, {}, {.cache = &cache});
        // Round 0 compiles; round 1 reads the bytes back from the disk.
        EXPECT_EQ(made_here(code), round == 0) << "round " << round;
        EXPECT_EQ(std::string(code.code()), std::string(compiled.code()));
    }
}

// One defect per case, in an otherwise sound crafted ELF; the message names it.
TEST(CodeValidation, EachStructuralDefectIsNamed) {
    Elf64_Sym function{};
    function.st_name = 1;
    function.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
    function.st_other = 0x10;
    function.st_shndx = 4;  // .text.k
    function.st_size = 16;
    auto symbols_with = [](const Elf64_Sym& symbol) {
        std::string bytes(sizeof(Elf64_Sym), '\0');
        return bytes.append(reinterpret_cast<const char*>(&symbol), sizeof symbol);
    };
    Elf64_Rela rela{};
    rela.r_offset = 8;
    rela.r_info = ELF64_R_INFO(1, 1);
    auto relocations_with = [](const Elf64_Rela& r) {
        return std::string(reinterpret_cast<const char*>(&r), sizeof r);
    };
    // 2 .strtab, 3 .symtab, 4 .text.k, 5 .rela.text.k
    auto sound = [&](Elf64_Sym symbol, Elf64_Rela relocation, std::string strings = std::string("\0k\0", 3)) {
        return craft_elf({{".strtab", SHT_STRTAB, strings},
                          {".symtab", SHT_SYMTAB, symbols_with(symbol), 2, 1, sizeof(Elf64_Sym)},
                          {".text.k", SHT_PROGBITS, std::string(16, '\0')},
                          {".rela.text.k", SHT_RELA, relocations_with(relocation), 3, 4,
                           sizeof(Elf64_Rela), SHF_INFO_LINK}});
    };
    const std::string base = sound(function, rela);
    ASSERT_NO_THROW(validate_code(CodeType::cubin, base));
    EXPECT_EQ(inspect_code(base).kernels, std::vector<std::string>{"k"});

    const auto header = get_at<Elf64_Ehdr>(base, 0);
    auto with_header = [&](auto change) {
        Elf64_Ehdr h = header;
        change(h);
        std::string bytes = base;
        put_at(bytes, 0, h);
        return bytes;
    };
    auto with_section = [&](std::size_t index, auto change) {
        const std::size_t at = header.e_shoff + index * sizeof(Elf64_Shdr);
        auto section = get_at<Elf64_Shdr>(base, at);
        change(section);
        std::string bytes = base;
        put_at(bytes, at, section);
        return bytes;
    };
    Elf64_Sym far_name = function;
    far_name.st_name = 1000;
    Elf64_Sym bad_home = function;
    bad_home.st_shndx = 60;
    Elf64_Sym outside = function;
    outside.st_value = 8;  // 8 + 16 bytes in a 16-byte section
    Elf64_Rela bad_symbol = rela;
    bad_symbol.r_info = ELF64_R_INFO(7, 1);
    Elf64_Rela bad_offset = rela;
    bad_offset.r_offset = 16;

    const std::vector<std::pair<std::string, std::string>> cases = {
        {"no ELF magic", "\x7f" "EXF" + base.substr(4)},
        {"not a cubin", with_header([](Elf64_Ehdr& h) { h.e_machine = 62; })},
        {"section header table", with_header([&](Elf64_Ehdr& h) { h.e_shoff = base.size() - 10; })},
        {"section header table", with_header([](Elf64_Ehdr& h) { h.e_shoff = ~std::uint64_t(0) - 8; })},
        {"section header size 40", with_header([](Elf64_Ehdr& h) { h.e_shentsize = 40; })},
        {"section header table", with_header([](Elf64_Ehdr& h) { h.e_shnum = 0xff00; })},
        {"section name table index", with_header([](Elf64_Ehdr& h) { h.e_shstrndx = 99; })},
        {"not a string table", with_header([](Elf64_Ehdr& h) { h.e_shstrndx = 4; })},
        {"program header table", with_header([&](Elf64_Ehdr& h) { h.e_phnum = 4; h.e_phentsize = sizeof(Elf64_Phdr); h.e_phoff = base.size() - 8; })},
        {"runs past the end", with_section(4, [&](Elf64_Shdr& s) { s.sh_offset = base.size() - 4; })},
        {"runs past the end", with_section(4, [](Elf64_Shdr& s) { s.sh_size = ~std::uint64_t(0); })},
        {"entries of 20 bytes", with_section(3, [](Elf64_Shdr& s) { s.sh_entsize = 20; })},
        {"which is not a string table", with_section(3, [](Elf64_Shdr& s) { s.sh_link = 4; })},
        {"relocates section 70", with_section(5, [](Elf64_Shdr& s) { s.sh_info = 70; })},
        {"name offset 1000", sound(far_name, rela)},
        {"section index 60", sound(bad_home, rela)},
        {"lies outside section 4", sound(outside, rela)},
        {"symbol 7 out of range", sound(function, bad_symbol)},
        {"offset 16 outside section 4", sound(function, bad_offset)},
        {"does not end with NUL", sound(function, rela, std::string("\0k\0k", 4))},
        // A symbol table hidden in the reserved section 0, whose strings lie past the end: a
        // reader that skipped section 0 in checks but not in use read out of bounds (fuzzing).
        {"section 0 is of type 2", with_section(0, [](Elf64_Shdr& s) {
             s.sh_type = SHT_SYMTAB;
             s.sh_offset = std::uint64_t(1) << 40;
             s.sh_size = 1;
         })},
    };
    for (const auto& [expected, bytes] : cases) {
        const std::string message = refusal([&bytes = bytes] { validate_code(CodeType::cubin, bytes, "c.cubin"); });
        EXPECT_TRUE(contains(message, expected)) << "expected '" << expected << "', got: " << message;
        EXPECT_TRUE(contains(message, "malformed cubin 'c.cubin' (")) << message;
        // Inspection refuses it the same way (an x86 ELF is a sound host object to it), and
        // never with a library's raw message.
        if (expected == "not a cubin") continue;
        const std::string inspected = refusal([&bytes = bytes] { inspect_code(bytes); });
        EXPECT_FALSE(inspected.empty()) << expected;
        EXPECT_FALSE(contains(inspected, "basic_string")) << inspected;
    }
}

TEST(CodeValidation, FatbinLibraryAndLtoIrDefectsAreNamed) {
    std::string fatbin = fatbin_around(real_cubin());
    ASSERT_NO_THROW(validate_code(CodeType::fatbin, fatbin));
    // The fatbin is sound, its image is not: the message says which entry.
    const std::string bad_image = fatbin_around(real_cubin().substr(0, 100) + std::string(500, '\0'));
    EXPECT_TRUE(contains(refusal([&] { validate_code(CodeType::fatbin, bad_image); }),
                         "entry 0 at offset 16: section header table"));
    std::string long_payload = fatbin;
    put_at<std::uint64_t>(long_payload, 24, real_cubin().size() + 1);
    EXPECT_TRUE(contains(refusal([&] { validate_code(CodeType::fatbin, long_payload); }),
                         "runs past the end of the entries"));
    std::string long_entries = fatbin;
    put_at<std::uint64_t>(long_entries, 8, ~std::uint64_t(0));
    EXPECT_TRUE(contains(refusal([&] { validate_code(CodeType::fatbin, long_entries); }),
                         "run past the end"));
    EXPECT_TRUE(contains(refusal([&] { validate_code(CodeType::fatbin, test::wrapping_fatbin()); }),
                         "no entries"));

    const std::string library = archive_of({{"k.cubin", real_cubin()}});
    ASSERT_NO_THROW(validate_code(CodeType::library, library));
    EXPECT_TRUE(contains(refusal([&] { validate_code(CodeType::library, library.substr(0, library.size() - 10)); }),
                         "run past the end"));
    std::string bad_size = library;
    bad_size[8 + 48] = 'x';  // the size field
    EXPECT_TRUE(contains(refusal([&] { validate_code(CodeType::library, bad_size, "libk.a"); }),
                         "malformed library 'libk.a'"));
    const std::string bad_member = archive_of({{"k.cubin", real_cubin().substr(0, 100)}});
    EXPECT_TRUE(contains(refusal([&] { validate_code(CodeType::library, bad_member); }),
                         "('k.cubin/')"));

    EXPECT_TRUE(contains(refusal([&] { validate_code(CodeType::ltoir, "\xed\x43\x4e\x7f"); }),
                         "shorter than an LTO-IR container header"));
    EXPECT_TRUE(contains(refusal([&] { validate_code(CodeType::ltoir, std::string(64, 'x')); }),
                         "no LTO-IR magic"));
    EXPECT_TRUE(contains(refusal([&] { validate_code(CodeType::cubin, ""); }), "empty"));
}

// A CPU sweep of the same mutants the GPU test loads: each one passes or is refused with
// InvalidArgumentError, never anything else; inspection likewise.
TEST(CodeValidation, MutatedCubinsPassOrAreRefusedNeverCrash) {
    const std::string original(compile(CodeType::cubin).code());
    int passed = 0, refused = 0;
    for (unsigned i = 0; i < 2000; ++i) {
        const std::string mutant = test::mutated_elf(original, i);
        try {
            validate_code(CodeType::cubin, mutant);
            ++passed;
        } catch (const InvalidArgumentError&) {
            ++refused;
        }
        try {
            inspect_code(mutant);
        } catch (const InvalidArgumentError&) {
        }
    }
    std::printf("2000 mutants: %d pass validation, %d refused\n", passed, refused);
    EXPECT_GT(passed, 0);  // changed code bytes keep the structure
    EXPECT_GT(refused, 500);
}

}  // namespace
