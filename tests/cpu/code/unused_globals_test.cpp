// ProgramOptions::remove_unused_globals (jitify's -remove-unused-globals): the PTX of a C++
// program without the module-scope variables nothing uses, keyed apart from the PTX with them,
// cached through the check compile, and still PTX the linker assembles. No GPU: explicit arch.
#include "test_support.hpp"

#include "code/ptx_unused_globals.hpp"
#include "cudacore/cache_key.hpp"
#include "cudacore/cached_compile.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/memory_program_cache.hpp"
#include "cudacore/program.hpp"

#include <sstream>
#include <string>

namespace {

using namespace cudacore;
using namespace cudacore::test;

const char* const kSource = R"(
__device__ int unused_device[1024];
__constant__ float unused_constant[256];
static __device__ int unused_static;
__device__ int used_device;
__device__ int pointed_to;
__device__ int* used_pointer = &pointed_to;
namespace x { __device__ int named_only; }
extern "C" __global__ void k(int* out) { out[0] = used_device + *used_pointer; }
)";

ProgramOptions options(bool remove) {
    ProgramOptions o;
    o.name = "unused_globals.cu";
    o.arch = "sm_90";
    o.remove_unused_globals = remove;
    return o;
}

// Whether `ptx` declares the variable `name` at module scope (a line that starts with a state
// space or .visible and names it).
bool declares(const std::string& ptx, const std::string& name) {
    std::istringstream lines(ptx);
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind(".global", 0) != 0 && line.rfind(".const", 0) != 0 && line.rfind(".visible", 0) != 0) continue;
        for (const char* after : {";", "[", " ="})
            if (line.find(" " + name + after) != std::string::npos) return true;
    }
    return false;
}

TEST(RemoveUnusedGlobals, DropsTheVariablesNothingUsesAndKeepsTheRest) {
    Program plain(kSource, SourceType::cxx, options(false));
    const std::string all = std::string(plain.compile(CodeType::ptx, {"&x::named_only"}).code());
    for (const char* name : {"unused_device", "unused_constant", "unused_static", "used_device"})
        EXPECT_TRUE(declares(all, name)) << name << " in\n" << all;

    Program trimmed(kSource, SourceType::cxx, options(true));
    const ObjectCode code = trimmed.compile(CodeType::ptx, {"&x::named_only"});
    const std::string ptx(code.code());
    for (const char* name : {"unused_device", "unused_constant", "unused_static"})
        EXPECT_FALSE(declares(ptx, name)) << name << " in\n" << ptx;
    // Used by an instruction, by a kept variable's initializer, named by a name expression.
    for (const char* name : {"used_device", "used_pointer", "pointed_to", "_ZN1x10named_onlyE"})
        EXPECT_TRUE(declares(ptx, name)) << name << " in\n" << ptx;
    EXPECT_LT(ptx.size(), all.size());
    EXPECT_EQ(code.lowered_name("&x::named_only"), "_ZN1x10named_onlyE");

    // Still PTX: the linker makes a cubin of it.
    Program assembled(ptx, SourceType::ptx, {.name = "trimmed.ptx", .arch = "sm_90"});
    EXPECT_EQ(assembled.compile(CodeType::cubin).code_type(), CodeType::cubin);
}

TEST(RemoveUnusedGlobals, RelocatableCodeKeepsEveryVariable) {
    ProgramOptions o = options(true);
    o.relocatable_device_code = true;
    Program program(kSource, SourceType::cxx, o);
    const std::string ptx(program.compile(CodeType::ptx).code());
    EXPECT_NE(ptx.find("unused_device["), std::string::npos) << ptx;
    EXPECT_NE(ptx.find("unused_constant["), std::string::npos) << ptx;
}

template <class Compile>
void expect_refused(Compile compile) {
    try {
        compile();
        ADD_FAILURE() << "compiled";
    } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("remove_unused_globals"), std::string::npos) << e.what();
    }
}

TEST(RemoveUnusedGlobals, OnlyForThePtxOfACxxProgram) {
    Program cxx(kSource, SourceType::cxx, options(true));
    expect_refused([&] { cxx.compile(CodeType::cubin); });
    expect_refused([&] { cxx.compile(CodeType::ltoir); });
    ProgramOptions ptx_options{.name = "a.ptx", .arch = "sm_90"};
    ptx_options.remove_unused_globals = true;
    Program ptx(".version 8.0\n.target sm_90\n.address_size 64\n", SourceType::ptx, ptx_options);
    expect_refused([&] { ptx.compile(CodeType::cubin); });
}

// jitify's flag passed through: NVRTC refuses it, and the error points at the option.
TEST(RemoveUnusedGlobals, JitifysFlagLeadsToTheOption) {
    ProgramOptions o = options(false);
    o.extra_flags = {"-remove-unused-globals"};
    Program program(kSource, SourceType::cxx, o);
    expect_invalid<CompileError>([&] { program.compile(CodeType::ptx); },
                                 {"unrecognized option", "ProgramOptions::remove_unused_globals = true"});
}

TEST(RemoveUnusedGlobals, EntersTheKeyAndIsCachedAsCompiled) {
    Program plain(kSource, SourceType::cxx, options(false));
    Program trimmed(kSource, SourceType::cxx, options(true));
    EXPECT_NE(cache_key(plain, CodeType::ptx), cache_key(trimmed, CodeType::ptx));
    MemoryProgramCache cache;
    const ObjectCode first = compile_cached(trimmed, CodeType::ptx, {}, {.cache = &cache});
    EXPECT_FALSE(declares(std::string(first.code()), "unused_device"));
    // Stored (its check compile, in the compile worker, agrees once trimmed alike), and a hit
    // gives the trimmed code; the plain program is a miss of its own.
    EXPECT_EQ(cache.stats().entries, 1u);
    const auto hit = find_cached(trimmed, CodeType::ptx, {}, {.cache = &cache});
    ASSERT_TRUE(hit.has_value());
    EXPECT_EQ(hit->code(), first.code());
    EXPECT_FALSE(find_cached(plain, CodeType::ptx, {}, {.cache = &cache}).has_value());
    const ObjectCode full = compile_cached(plain, CodeType::ptx, {}, {.cache = &cache});
    EXPECT_TRUE(declares(std::string(full.code()), "unused_device"));
    EXPECT_EQ(cache.stats().entries, 2u);
}

// The PTX pass alone, on text NVRTC may write: declarations over several lines, comments, and
// forms it does not read (left as they are).
TEST(RemoveUnusedGlobals, ThePtxPassKeepsWhatItCannotRead) {
    const std::string ptx = ".version 8.0\n"
                            ".global .align 4 .b8 table[8] = {1, 2,\n 3, 4, 5, 6, 7, 8};\n"
                            ".global .align 8 .u64 alias = generic(table); // only alias's use keeps table\n"
                            ".const .align 4 .u32 dead;\n"
                            ".visible .global .align 4 .u32 seen_elsewhere;\n"
                            ".entry k()\n{\n\tld.global.u64 %rd1, [alias];\n}\n";
    const std::string out = detail::without_unused_globals(ptx, {});
    EXPECT_EQ(out.find("dead"), std::string::npos) << out;
    EXPECT_NE(out.find("table[8] = {1, 2,\n 3, 4, 5, 6, 7, 8};\n"), std::string::npos) << out;
    EXPECT_NE(out.find("seen_elsewhere"), std::string::npos) << out;
    EXPECT_EQ(out.size(), ptx.size() - std::string(".const .align 4 .u32 dead;\n").size());
    EXPECT_EQ(detail::without_unused_globals(ptx + "/* a block comment */\n", {}), ptx + "/* a block comment */\n");
    EXPECT_EQ(detail::without_unused_globals(".global .u32 unterminated\n", {}), ".global .u32 unterminated\n");
    EXPECT_EQ(detail::without_unused_globals(".global .u32 a, b;\n", {}), ".global .u32 a, b;\n");
    EXPECT_EQ(detail::without_unused_globals(".global .u32 named;\n", {{"&named", "named"}}), ".global .u32 named;\n");
}

}  // namespace
