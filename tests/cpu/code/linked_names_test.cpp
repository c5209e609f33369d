// Linked code keeps its inputs' name expressions: the symbol map of Linker::link()'s result maps
// each input's name expressions to the lowered names they had there, so get_kernel("k<float>")
// finds in the linked code what it found in the compiled input. No GPU: explicit arch.
#include "test_support.hpp"

#include "cudacore/code_inspection.hpp"
#include "cudacore/linker.hpp"
#include "cudacore/program.hpp"

#include <algorithm>

namespace {

using namespace cudacore;

constexpr const char* kUnitA = R"(
extern __device__ float scale_of(float x);
template <class T> __global__ void apply(T* data) { data[threadIdx.x] = scale_of(data[threadIdx.x]); }
)";
constexpr const char* kUnitB = R"(
__device__ float scale_of(float x) { return 3.0f * x; }
template <class T, int N> __global__ void add(T* data) { data[threadIdx.x] += N; }
)";

ObjectCode compile_unit(const char* source, const std::string& name, CodeType target,
                        const std::vector<std::string>& names) {
    ProgramOptions options;
    options.name = name;
    options.arch = "sm_90";
    options.relocatable_device_code = true;
    return Program(source, SourceType::cxx, options).compile(target, names);
}

LinkerOptions link_options(bool lto) {
    LinkerOptions options;
    options.name = "named_link";
    options.arch = "sm_90";
    if (lto) options.link_time_optimization = true;
    return options;
}

void expect_names_kept(CodeType input_type, bool lto) {
    const ObjectCode a = compile_unit(kUnitA, "unit_a", input_type, {"apply<float>", "apply<int>"});
    const ObjectCode b = compile_unit(kUnitB, "unit_b", input_type, {"add<float, 2>"});
    const ObjectCode linked = Linker({a, b}, link_options(lto)).link(CodeType::cubin);
    const SymbolMap& map = linked.symbol_map();
    ASSERT_EQ(map.size(), 3u);
    EXPECT_EQ(map.at("apply<float>"), a.symbol_map().at("apply<float>"));
    EXPECT_EQ(map.at("apply<int>"), a.symbol_map().at("apply<int>"));
    EXPECT_EQ(map.at("add<float, 2>"), b.symbol_map().at("add<float, 2>"));
    // The lowered names are the linked cubin's kernels.
    const CodeInfo info = inspect_code(linked.code());
    for (const auto& [expression, lowered] : map) {
        EXPECT_NE(std::find(info.kernels.begin(), info.kernels.end(), lowered), info.kernels.end())
            << expression << " -> " << lowered;
    }
}

TEST(LinkedNames, CubinInputsKeepTheirNameExpressions) { expect_names_kept(CodeType::cubin, false); }

TEST(LinkedNames, LtoIrInputsKeepTheirNameExpressions) { expect_names_kept(CodeType::ltoir, true); }

TEST(LinkedNames, LinkedPtxKeepsThemToo) {
    const ObjectCode a = compile_unit(kUnitA, "unit_a", CodeType::ltoir, {"apply<float>"});
    const ObjectCode b = compile_unit(kUnitB, "unit_b", CodeType::ltoir, {});
    const ObjectCode ptx = Linker({a, b}, link_options(true)).link(CodeType::ptx);
    EXPECT_EQ(ptx.symbol_map().at("apply<float>"), a.symbol_map().at("apply<float>"));
    EXPECT_NE(ptx.code().find(a.symbol_map().at("apply<float>")), std::string_view::npos);
}

TEST(LinkedNames, AnExpressionTwoInputsLowerDifferentlyIsLeftOut) {
    // The same expression mapped to two lowered names: neither is the one meant.
    const ObjectCode a = compile_unit(kUnitA, "unit_a", CodeType::cubin, {"apply<float>"});
    ObjectCode b = compile_unit(kUnitB, "unit_b", CodeType::cubin, {"add<float, 2>"});
    const ObjectCode b_renamed = ObjectCode::from_cubin(std::string(b.code()), "unit_b",
                                                        {{"apply<float>", b.symbol_map().at("add<float, 2>")},
                                                         {"same", "x"}});
    const ObjectCode a_more = ObjectCode::from_cubin(std::string(a.code()), "unit_a",
                                                     {{"apply<float>", a.symbol_map().at("apply<float>")},
                                                      {"same", "x"}});
    const ObjectCode linked = Linker({a_more, b_renamed}, link_options(false)).link(CodeType::cubin);
    EXPECT_EQ(linked.symbol_map().count("apply<float>"), 0u);
    EXPECT_EQ(linked.symbol_map().at("same"), "x");  // the same on both sides: kept
}

}  // namespace
