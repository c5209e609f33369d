// Code inspection: the code type, arch and kernels told from bytes alone, and malformed input
// refused without crashing.
#include "crafted_code.hpp"
#include "test_support.hpp"

#include "cudacore/code_inspection.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/program.hpp"
#include "code/cxx_global_names.hpp"
#include "code/kernel_parameter_count.hpp"

#include <sys/resource.h>
#include <pthread.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>

namespace {

using namespace cudacore;
using test::fatbin_around;

constexpr const char* kSource = R"(
extern "C" __global__ void first(int* p) { *p = 1; }
extern "C" __global__ void second(int* p) { *p = 2; }
__device__ int helper(int x) { return x + 1; }
)";

ObjectCode compile(CodeType target, const std::string& arch = "sm_90") {
    ProgramOptions options;
    options.arch = arch;
    return Program(kSource, SourceType::cxx, options).compile(target);
}


TEST(CodeInspection, Cubin) {
    for (const std::string arch : {"sm_75", "sm_90", "sm_100"}) {
        ObjectCode cubin = compile(CodeType::cubin, arch);
        CodeInfo info = inspect_code(cubin.code());
        EXPECT_EQ(info.type, CodeType::cubin);
        EXPECT_EQ(info.arch, arch);
        EXPECT_EQ(info.size, cubin.size());
        EXPECT_EQ(info.kernels, (std::vector<std::string>{"first", "second"}));
    }
}

TEST(CodeInspection, Ptx) {
    ObjectCode ptx = compile(CodeType::ptx, "sm_86");
    CodeInfo info = inspect_code(ptx.code());
    EXPECT_EQ(info.type, CodeType::ptx);
    EXPECT_EQ(info.arch, "sm_86");
    EXPECT_FALSE(info.ptx_version.empty());
    EXPECT_EQ(info.kernels, (std::vector<std::string>{"first", "second"}));
}

TEST(CodeInspection, LtoIr) {
    ObjectCode ltoir = compile(CodeType::ltoir);
    CodeInfo info = inspect_code(ltoir.code());
    EXPECT_EQ(info.type, CodeType::ltoir);
    EXPECT_EQ(info.size, ltoir.size());
    EXPECT_TRUE(info.kernels.empty());
}

TEST(CodeInspection, Fatbin) {
    ObjectCode cubin = compile(CodeType::cubin);
    const std::string fatbin = fatbin_around(cubin.code(), 90);
    CodeInfo info = inspect_code(fatbin);
    EXPECT_EQ(info.type, CodeType::fatbin);
    ASSERT_EQ(info.entries.size(), 1u);
    EXPECT_EQ(info.entries[0].kind, "elf");
    EXPECT_EQ(info.entries[0].arch, "sm_90");
    EXPECT_EQ(info.entries[0].size, cubin.size());
    EXPECT_EQ(info.arch, "sm_90");
    EXPECT_EQ(info.kernels, (std::vector<std::string>{"first", "second"}));
}

TEST(CodeInspection, FatbinFromTheToolkitWhenPresent) {
    const std::filesystem::path tool = "/usr/local/cuda/bin/fatbinary";
    if (!std::filesystem::exists(tool)) GTEST_SKIP() << "no " << tool;
    test::TempDir dir;
    test::write_file(dir.path() / "a.cubin", std::string(compile(CodeType::cubin, "sm_80").code()));
    test::write_file(dir.path() / "b.cubin", std::string(compile(CodeType::cubin, "sm_90").code()));
    auto result = test::run_process(
        {tool.string(), "--create=" + (dir.path() / "x.fatbin").string(),
         "--image3=kind=elf,sm=80,file=" + (dir.path() / "a.cubin").string(),
         "--image3=kind=elf,sm=90,file=" + (dir.path() / "b.cubin").string()});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    CodeInfo info = inspect_code(test::read_file(dir.path() / "x.fatbin"));
    EXPECT_EQ(info.type, CodeType::fatbin);
    ASSERT_EQ(info.entries.size(), 2u);
    EXPECT_EQ(info.entries[0].arch, "sm_80");
    EXPECT_EQ(info.entries[1].arch, "sm_90");
    EXPECT_EQ(info.arch, "");  // several archs: see entries
    EXPECT_EQ(info.kernels, (std::vector<std::string>{"first", "second"}));
}

TEST(CodeInspection, HostObjectAndLibrary) {
    // Any non-CUDA ELF is a host object; this test's own executable will do.
    const std::string self = test::read_file("/proc/self/exe");
    EXPECT_EQ(detect_code_type(self), CodeType::object);
    EXPECT_EQ(detect_code_type("!<arch>\nmember/  0 0 0 644 4 `\nabcd"), CodeType::library);
}

TEST(CodeInspection, GarbageAndTruncatedInputAreErrors) {
    EXPECT_FALSE(try_detect_code_type("hello world").has_value());
    EXPECT_FALSE(try_detect_code_type("").has_value());
    try {
        detect_code_type("hello world");
        FAIL();
    } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("11 bytes"), std::string::npos) << e.what();
    }
    const std::string cubin(compile(CodeType::cubin).code());
    for (std::size_t size : {std::size_t{5}, std::size_t{40}, std::size_t{64}, cubin.size() / 2}) {
        const std::string cut = cubin.substr(0, size);
        EXPECT_THROW(inspect_code(cut), InvalidArgumentError) << size;
    }
    std::string fatbin = fatbin_around(cubin, 90);
    EXPECT_THROW(inspect_code(std::string_view(fatbin).substr(0, 80)), InvalidArgumentError);
}

TEST(CodeInspection, ObjectCodeTrustsItsDeclaredType) {
    ObjectCode ptx = compile(CodeType::ptx);
    EXPECT_EQ(inspect_code(ptx).kernels, (std::vector<std::string>{"first", "second"}));
    ObjectCode odd = ObjectCode::from_ptx("not recognisable", "odd");
    CodeInfo info = inspect_code(odd);
    EXPECT_EQ(info.type, CodeType::ptx);
    EXPECT_EQ(info.size, odd.size());
}

TEST(CodeInspection, PtxEntryNames) {
    const std::string ptx = ".version 8.0\n.target sm_90\n.address_size 64\n"
                            ".visible .entry _Z3fooPi(\n.param .u64 p\n)\n{ ret; }\n"
                            ".entry bar (\n)\n{ ret; }\n.func helper()\n{ ret; }\n";
    EXPECT_EQ(ptx_kernel_names(ptx), (std::vector<std::string>{"_Z3fooPi", "bar"}));
    EXPECT_EQ(inspect_code(ptx).arch, "sm_90");
}

// ---- hostile inputs: each ends in a clear error or a correct, bounded result ----------------

// Peak resident memory of this process so far, in MiB.
long peak_rss_mib() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss / 1024;
}

// Runs `f` and checks it took bounded time and memory (the inputs below once took minutes and
// gigabytes, or never ended).
template <typename F>
void bounded(const char* what, F&& f) {
    const auto start = std::chrono::steady_clock::now();
    f();
    const auto seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(seconds, 5.0) << what;
    EXPECT_LT(peak_rss_mib(), 1024) << what;
}

std::string inspection_error(std::string_view code) {
    try {
        inspect_code(code);
    } catch (const InvalidArgumentError& e) {
        return e.what();
    }
    return {};
}

TEST(CodeInspectionHostile, WrappingFatbinEntryIsAnErrorNotAnEndlessLoop) {
    const std::string fatbin = test::wrapping_fatbin();
    ASSERT_EQ(fatbin.size(), 84u);
    bounded("84-byte fatbin", [&] {
        const std::string error = inspection_error(fatbin);
        EXPECT_NE(error.find("malformed fatbin (84 bytes)"), std::string::npos) << error;
    });
    // The same entry with room for its header: its payload size is what is wrong.
    std::string roomy = fatbin;
    test::put_at<std::uint64_t>(roomy, 8, 68);
    const std::string error = inspection_error(roomy);
    EXPECT_NE(error.find("payload of 18446744073709551552 bytes runs past the end"), std::string::npos)
        << error;
}

TEST(CodeInspectionHostile, EntryPastTheEndSaysSoNotTheLibrarysRawMessage) {
    // An entry header size that points beyond the bytes (once "basic_string_view::substr:
    // __pos (which is 5016) > __size (which is 64)").
    std::string fatbin = fatbin_around(compile(CodeType::cubin).code(), 90);
    test::put_at<std::uint32_t>(fatbin, 20, 60000);
    const std::string error = inspection_error(fatbin);
    EXPECT_NE(error.find("entry 0 at offset 16: header size 60000 out of range"), std::string::npos)
        << error;
    EXPECT_EQ(error.find("basic_string"), std::string::npos) << error;
}

TEST(CodeInspectionHostile, SymbolNamesAreBoundedByTheirSectionAndTheInputSize) {
    const std::string unterminated = test::symbol_bomb_cubin(false);
    EXPECT_GT(unterminated.size(), 1000000u);
    bounded("21,000 symbols into an unterminated string table", [&] {
        const std::string error = inspection_error(unterminated);
        EXPECT_NE(error.find("string table that does not end with NUL"), std::string::npos) << error;
    });
    // Terminated, the table is sound, but 21,000 copies of a 512 KiB name are not a bounded
    // result: the names may take at most twice the input's size.
    const std::string terminated = test::symbol_bomb_cubin(true);
    bounded("21,000 symbols sharing one 512 KiB name", [&] {
        const std::string error = inspection_error(terminated);
        EXPECT_NE(error.find("kernel names exceed the work limit"), std::string::npos) << error;
    });
}

// Names are read only where they are wanted: symbols that are not kernels, and sections that are
// not the one looked for, may all name one long string without costing its length each.
TEST(CodeInspectionHostile, SymbolsAndSectionsSharingOneLongNameAreNotReadEach) {
    std::string strings(4 << 20, 'n');
    strings.back() = '\0';
    std::string symbols(sizeof(Elf64_Sym), '\0');
    for (int i = 0; i < 60000; ++i) {
        Elf64_Sym symbol{};
        symbol.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_NOTYPE);  // not a kernel
        symbols.append(reinterpret_cast<const char*>(&symbol), sizeof symbol);
    }
    const std::string cubin = test::craft_elf(
        {{".strtab", SHT_STRTAB, strings}, {".symtab", SHT_SYMTAB, symbols, /*link=*/2, /*info=*/1, sizeof(Elf64_Sym)}});
    bounded("60,000 symbols that are no kernels sharing one 4 MiB name", [&] {
        EXPECT_TRUE(cudacore::inspect_code(std::string_view(cubin)).kernels.empty());
    });

    // 60,000 sections all named by one 4 MiB name of .shstrtab (the first after ".shstrtab").
    std::vector<test::CraftedSection> sections{{std::string(4 << 20, 's')}};
    sections.resize(60001);
    std::string many = test::craft_elf(sections);
    const auto table = test::get_at<std::uint64_t>(many, offsetof(Elf64_Ehdr, e_shoff));
    for (std::size_t index = 3; index < sections.size() + 2; ++index)
        test::put_at<std::uint32_t>(many, table + index * sizeof(Elf64_Shdr) + offsetof(Elf64_Shdr, sh_name), 11);
    bounded("a kernel's parameters looked for among 60,000 sections sharing one 4 MiB name", [&] {
        EXPECT_EQ(cudacore::detail::cubin_kernel_parameter_count(many, "k"), std::nullopt);
    });

    // PTX whose comment holds ".entry" 700,000 times: each is read once.
    std::string ptx = ".version 9.0\n.target sm_90\n.address_size 64\n// ";
    for (int i = 0; i < 700000; ++i) ptx += ".entry";
    ptx += "\n.visible .entry k(.param .u32 a, .param .u64 b)\n{\nret;\n}\n";
    bounded("a kernel's parameters looked for after 700,000 .entry in a row", [&] {
        EXPECT_EQ(cudacore::detail::ptx_kernel_parameter_count(ptx, "k"), 2u);
    });
}

// A cubin's global names are demangled to find one by its C++ name, but not those whose text
// could be exponential in their length (back references that double it at each level).
TEST(CodeInspectionHostile, GlobalNamesThatDemangleExponentiallyAreNotDemangled) {
    auto reference = [](int i) {  // S_, S0_, S1_, ... (base 36)
        if (i == 0) return std::string("S_");
        std::string digits;
        for (int v = i - 1;; v /= 36) {
            digits.insert(digits.begin(), "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"[v % 36]);
            if (v < 36) break;
        }
        return "S" + digits + "_";
    };
    // g(B<A, A>, B<B<A, A>, B<A, A>>, ...): each argument twice the text of the one before.
    std::string bomb = "_Z1g1BI1AS0_E";
    for (int level = 1; level < 26; ++level) bomb += "S_I" + reference(level + 1) + reference(level + 1) + "E";
    const std::vector<std::string> names{bomb, "_ZN6tuning5scaleE"};
    using cudacore::detail::lowered_global_of_cxx_name;
    bounded("a C++ name looked for among names whose demangled text is gigabytes", [&] {
        EXPECT_EQ(lowered_global_of_cxx_name("tuning::scale", names), "_ZN6tuning5scaleE");
        // As long as the bomb, so that only its back references keep it from being demangled.
        EXPECT_EQ(lowered_global_of_cxx_name(std::string(bomb.size(), 'x'), names), std::nullopt);
    });
}

// A thread with a small stack: a scan that recursed per character (as std::regex did) would
// overflow it long before 40 KB.
template <typename F>
void on_small_stack(F f) {
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, 256 * 1024);
    pthread_t thread;
    auto run = [](void* argument) -> void* {
        (*static_cast<F*>(argument))();
        return nullptr;
    };
    ASSERT_EQ(pthread_create(&thread, &attributes, run, &f), 0);
    pthread_join(thread, nullptr);
    pthread_attr_destroy(&attributes);
}

TEST(CodeInspectionHostile, LongPtxIdentifiersAreScannedWithoutRecursion) {
    const std::size_t length = 40 * 1024;
    CodeInfo entry_info, target_info;
    std::vector<std::string> names;
    on_small_stack([&] {
        entry_info = inspect_code(test::long_identifier_ptx(".entry", length));
        target_info = inspect_code(test::long_identifier_ptx(".target", length));
        names = ptx_kernel_names(test::long_identifier_ptx(".entry", 4 * 1024 * 1024));
    });
    ASSERT_EQ(entry_info.kernels.size(), 1u);
    EXPECT_EQ(entry_info.kernels[0], std::string(length, 'a'));
    EXPECT_EQ(entry_info.arch, "sm_90");
    EXPECT_EQ(target_info.arch, "");  // not an arch name: none claimed
    EXPECT_EQ(target_info.ptx_version, "8.0");
    ASSERT_EQ(names.size(), 1u);
    EXPECT_EQ(names[0].size(), 4u * 1024 * 1024);
}

TEST(CodeInspectionHostile, PtxScanMatchesTheDirectivesAsBefore) {
    const std::string ptx = "// .entry commented (\n\n.version  7.8\n.target\tsm_90a, texmode_independent\n"
                            ".entry bad name(\n.entry$odd%name$ (\n.entry\n\tok_1\n(\n.entrytight(\n";
    const CodeInfo info = inspect_code(ptx);
    EXPECT_EQ(info.ptx_version, "7.8");
    EXPECT_EQ(info.arch, "sm_90a");
    EXPECT_EQ(ptx_kernel_names(ptx), (std::vector<std::string>{"commented", "ok_1"}));
}

}  // namespace

namespace {

TEST(CodeInspection, CubinGlobalNames) {
    const char* source = R"(
__constant__ float coefficients[4];
__device__ int counter;
__managed__ int shared_flag;
namespace tuning { __device__ float scale; }
extern "C" __global__ void touch(float* out) {
    out[0] = coefficients[0] + counter + shared_flag + tuning::scale;
    printf("a string literal the compiler names itself\n");
}
)";
    cudacore::ProgramOptions options;
    options.arch = "sm_90";
    const cudacore::ObjectCode code =
        cudacore::Program(source, cudacore::SourceType::cxx, options).compile(cudacore::CodeType::cubin);
    const std::vector<std::string> names = cudacore::cubin_global_names(code.code());
    EXPECT_EQ(names, (std::vector<std::string>{"_ZN6tuning5scaleE", "coefficients", "counter",
                                               "shared_flag"}));
    EXPECT_THROW(cudacore::cubin_global_names("not an elf"), cudacore::InvalidArgumentError);
}

// A global's C++ name ("x::a", "x::y::b") leads to its lowered name among a
// cubin's globals (ObjectCode::get_global's fallback); a plain or unknown name leads nowhere.
TEST(CodeInspection, GlobalsByTheirCxxNames) {
    const char* source = R"(
namespace tuning { __device__ float scale; namespace deep { __constant__ int limits[2]; } }
namespace { __device__ int hidden; }
__device__ int counter;
extern "C" __global__ void touch(float* out) {
    out[0] = tuning::scale + tuning::deep::limits[0] + hidden + counter;
}
)";
    cudacore::ProgramOptions options;
    options.arch = "sm_90";
    const cudacore::ObjectCode code =
        cudacore::Program(source, cudacore::SourceType::cxx, options).compile(cudacore::CodeType::cubin);
    const std::vector<std::string> names = cudacore::cubin_global_names(code.code());
    using cudacore::detail::lowered_global_of_cxx_name;
    EXPECT_EQ(lowered_global_of_cxx_name("tuning::scale", names), "_ZN6tuning5scaleE");
    EXPECT_EQ(lowered_global_of_cxx_name("tuning::deep::limits", names), "_ZN6tuning4deep6limitsE");
    EXPECT_EQ(lowered_global_of_cxx_name("counter", names), std::nullopt);  // the driver knows it
    EXPECT_EQ(lowered_global_of_cxx_name("tuning::missing", names), std::nullopt);
    EXPECT_EQ(lowered_global_of_cxx_name("scale", names), std::nullopt);
}

}  // namespace
