// FatbinBuilder: cubins, PTX and LTO-IR of several archs built into one fatbin with nvFatbin,
// listed by inspect_code, carried through serialization; bad input refused with clear errors.
#include "test_support.hpp"

#include "cudacore/code_inspection.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/fatbin.hpp"
#include "cudacore/program.hpp"

#include <string>
#include <vector>

namespace {

using namespace cudacore;

constexpr const char* kSource = R"(
template <typename T> __global__ void scale(T* p, T factor) { p[threadIdx.x] *= factor; }
extern "C" __global__ void fill(int* p) { p[threadIdx.x] = 7; }
)";

ObjectCode compile(CodeType target, const std::string& arch, std::vector<std::string> names = {"scale<float>"}) {
    ProgramOptions options;
    options.arch = arch;
    options.name = "scale.cu";
    if (target == CodeType::ltoir) options.link_time_optimization = true;
    return Program(kSource, SourceType::cxx, options).compile(target, names);
}

std::vector<std::string> kinds_and_archs(const CodeInfo& info) {
    std::vector<std::string> out;
    for (const FatbinEntry& entry : info.entries) out.push_back(entry.kind + ":" + entry.arch);
    return out;
}

TEST(Fatbin, CubinsAndPtxOfSeveralArchsInOneFatbin) {
    const ObjectCode sm80 = compile(CodeType::cubin, "sm_80");
    const ObjectCode sm90 = compile(CodeType::cubin, "sm_90");
    const ObjectCode ptx90 = compile(CodeType::ptx, "compute_90");
    FatbinOptions options;
    options.compress = false;
    const ObjectCode fatbin =
        FatbinBuilder(options).add(sm80, "sm_80").add(sm90).add(ptx90, "compute_90").build();

    EXPECT_EQ(fatbin.code_type(), CodeType::fatbin);
    EXPECT_EQ(fatbin.name(), "scale.cu");  // the first image's
    EXPECT_EQ(fatbin.lowered_name("scale<float>"), sm80.lowered_name("scale<float>"));
    const CodeInfo info = inspect_code(fatbin);
    EXPECT_EQ(info.type, CodeType::fatbin);
    EXPECT_EQ(kinds_and_archs(info), (std::vector<std::string>{"elf:sm_80", "elf:sm_90", "ptx:compute_90"}));
    for (const FatbinEntry& entry : info.entries) {
        EXPECT_FALSE(entry.compressed) << entry.kind << " " << entry.arch;
        EXPECT_GT(entry.size, 0u);
    }
    // The uncompressed cubin images are the cubins given.
    EXPECT_GE(info.entries[0].size, sm80.size());
    EXPECT_NE(std::find(info.kernels.begin(), info.kernels.end(), "fill"), info.kernels.end());
    EXPECT_GT(fatbin.size(), sm80.size() + sm90.size());
}

TEST(Fatbin, CompressAllCompressesSmallImages) {
    // nvFatbin's default compresses only images it finds large; compress_all compresses all.
    std::string source = "extern \"C\" __global__ void big(float* p) {\n";
    for (int i = 0; i < 400; ++i)
        source += "  p[threadIdx.x + " + std::to_string(i) + "] = p[threadIdx.x] * " + std::to_string(i) + ".5f;\n";
    source += "}\n";
    ProgramOptions options;
    options.arch = "sm_90";
    const ObjectCode cubin = Program(source, SourceType::cxx, options).compile(CodeType::cubin);
    FatbinOptions all;
    all.compress_all = true;
    const ObjectCode compressed = FatbinBuilder(all).add(cubin).build("big");
    FatbinOptions plain;
    plain.compress = false;
    const ObjectCode uncompressed = FatbinBuilder(plain).add(cubin).build("big");
    const CodeInfo info = inspect_code(compressed);
    ASSERT_EQ(info.entries.size(), 1u);
    EXPECT_TRUE(info.entries[0].compressed);
    EXPECT_EQ(info.entries[0].arch, "sm_90");
    EXPECT_FALSE(inspect_code(uncompressed).entries[0].compressed);
    EXPECT_LT(compressed.size(), uncompressed.size());
    EXPECT_EQ(compressed.name(), "big");
}

TEST(Fatbin, LtoIrNeedsItsArch) {
    const ObjectCode ltoir = compile(CodeType::ltoir, "sm_90");
    FatbinBuilder builder;
    try {
        builder.add(ltoir);
        FAIL() << "LTO-IR without an arch was accepted";
    } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("LTO-IR does not record its arch"), std::string::npos) << e.what();
    }
    FatbinOptions plain;
    plain.compress = false;
    const CodeInfo info = inspect_code(FatbinBuilder(plain).add(ltoir, "lto_90").build());
    EXPECT_EQ(kinds_and_archs(info), (std::vector<std::string>{"ltoir:lto_90"}));
}

TEST(Fatbin, SerializesLikeAnyObjectCode) {
    const ObjectCode fatbin = FatbinBuilder()
                                  .add(compile(CodeType::cubin, "sm_80"))
                                  .add(compile(CodeType::ptx, "compute_80"))
                                  .build("two.fatbin");
    const ObjectCode back = ObjectCode::deserialize(fatbin.serialize());
    EXPECT_EQ(back, fatbin);
    EXPECT_EQ(back.code_type(), CodeType::fatbin);
    EXPECT_EQ(back.name(), "two.fatbin");
    EXPECT_EQ(back.code(), fatbin.code());
    EXPECT_EQ(back.symbol_map(), fatbin.symbol_map());
    EXPECT_EQ(inspect_code(back).entries.size(), 2u);
}

TEST(Fatbin, ArchNamesAreChecked) {
    EXPECT_EQ(fatbin_arch_number("sm_90a"), "90a");
    EXPECT_EQ(fatbin_arch_number("compute_80"), "80");
    EXPECT_EQ(fatbin_arch_number("lto_100f"), "100f");
    EXPECT_EQ(fatbin_arch_number("75"), "75");
    for (const char* bad : {"", "sm_", "sm_9", "sm_1000", "sm_90x", "gfx90", "compute90"}) {
        try {
            fatbin_arch_number(bad);
            ADD_FAILURE() << "'" << bad << "' was accepted";
        } catch (const InvalidArgumentError& e) {
            EXPECT_NE(std::string(e.what()).find("'" + std::string(bad) + "'"), std::string::npos) << e.what();
        }
    }
    EXPECT_THROW(FatbinBuilder().add(compile(CodeType::cubin, "sm_80"), "sm_8x"), InvalidArgumentError);
}

TEST(Fatbin, OnlyCubinPtxAndLtoIrGoIn) {
    const ObjectCode fatbin = FatbinBuilder().add(compile(CodeType::cubin, "sm_80")).build();
    try {
        FatbinBuilder().add(fatbin, "sm_80");
        FAIL() << "a fatbin went into a fatbin";
    } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("only cubin, PTX and LTO-IR"), std::string::npos) << e.what();
    }
    try {
        FatbinBuilder().build();
        FAIL() << "an empty fatbin was built";
    } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("no images"), std::string::npos) << e.what();
    }
}

TEST(Fatbin, NvFatbinRefusalNamesCallStatusAndImage) {
    // A cubin for sm_90 declared as sm_80: nvFatbin checks the ELF's arch.
    const ObjectCode sm90 = compile(CodeType::cubin, "sm_90");
    try {
        FatbinBuilder().add(sm90, "sm_80").build("mismatch");
        FAIL() << "a cubin with the wrong arch was accepted";
    } catch (const CompilerApiError& e) {
        const std::string message = e.what();
        EXPECT_EQ(e.call(), "nvFatbinAddCubin");
        EXPECT_NE(e.status(), 0);
        EXPECT_FALSE(e.status_name().empty());
        EXPECT_NE(message.find("fatbin 'mismatch'"), std::string::npos) << message;
        EXPECT_NE(message.find("image 0 (cubin 'scale.cu' for 80"), std::string::npos) << message;
    }
}

TEST(Fatbin, ImagesOfDifferentSourcesMustAgreeOnLoweredNames) {
    const ObjectCode a = compile(CodeType::cubin, "sm_80");
    const ObjectCode b = ObjectCode::from_cubin(std::string(compile(CodeType::cubin, "sm_90").code()),
                                                "other", {{"scale<float>", "_Z5otherv"}});
    EXPECT_THROW(FatbinBuilder().add(a).add(b).build(), InvalidArgumentError);
}

}  // namespace
