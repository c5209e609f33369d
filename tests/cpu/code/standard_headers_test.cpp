// The C++ standard headers nvcc code includes compile under NVRTC through cudacore's standard
// headers (ProgramOptions::std_headers): a kernel per header, the option's off switch, and the
// program cache keying a compile that reads them like any header. No GPU: explicit arch.
#include "test_support.hpp"

#include "cudacore/cached_compile.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/memory_program_cache.hpp"
#include "cudacore/program.hpp"
#include "cudacore/standard_headers.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace cudacore;

// A kernel per header, each using what the header is included for.
const std::vector<std::pair<std::string, std::string>> kKernelPerHeader = {
    {"type_traits", "static_assert(std::is_same_v<std::remove_cv_t<const T>, T>);\n"
                    "out[0] = std::is_floating_point<T>::value ? 1 : 0;"},
    {"limits", "out[0] = std::numeric_limits<T>::max() + std::numeric_limits<int>::digits;"},
    {"climits", "out[0] = CHAR_BIT + (INT_MAX > 0) + (LLONG_MIN < 0);"},
    {"cstdint", "std::uint32_t a = UINT32_MAX; int64_t b = INT64_MIN; std::uintptr_t c = 0;\n"
                "out[0] = T(a) + T(b) + T(c) + sizeof(std::int8_t);"},
    {"cmath", "out[0] = std::sqrt(T(4)) + std::fma(T(1), T(2), T(3)) + std::fmod(T(5), T(3)) +\n"
              "         std::abs(T(-1)) + std::isnan(out[1]) + std::erf(T(0)) + std::pow(T(2), 3);"},
    {"tuple", "auto t = std::make_tuple(1, T(2));\n"
              "out[0] = std::get<1>(t) + std::tuple_size<decltype(t)>::value;"},
    {"utility", "auto p = std::make_pair(1, T(2)); std::swap(p.first, p.first);\n"
                "out[0] = std::move(p).second + std::forward<int>(p.first);"},
    {"cassert", "assert(out != nullptr); out[0] = 1;"},
    {"cstdio", "printf(\"%d\\n\", 1); std::printf(\"%f\\n\", double(out[0]));"},
    {"cstddef", "std::size_t n = sizeof(T); std::ptrdiff_t d = 1; out[0] = n + d;"},
    {"cfloat", "out[0] = FLT_MAX > 0 ? FLT_EPSILON : DBL_EPSILON;"},
    {"array", "std::array<int, 3> a{1, 2, 3}; out[0] = a[2] + a.size();"},
    {"optional", "std::optional<int> o = 5; out[0] = o.value_or(0);"},
    {"functional", "out[0] = std::plus<int>{}(1, 2);"},
    {"numeric", "int v[3] = {1, 2, 3}; out[0] = std::accumulate(v, v + 3, 0);"},
    {"bit", "out[0] = std::popcount(7u);"},
    {"complex", "std::complex<T> c(1, 2); out[0] = c.imag();"},
    {"stdint.h", "uint32_t a = 7; out[0] = a;"},
    {"math.h", "out[0] = std::sqrt(T(9));"},
};

std::string kernel_source(const std::string& header, const std::string& body) {
    return "#include <" + header + ">\ntemplate <class T>\n__global__ void use(T* out) {\n" + body +
           "\n}\ntemplate __global__ void use<float>(float*);\n";
}

ProgramOptions options_for(const std::string& name) {
    ProgramOptions options;
    options.name = name;
    options.arch = "sm_90";
    options.pch = false;  // each compile its own (no PCH shared between the cases)
    options.std_headers = true;
    return options;
}

TEST(StandardHeaders, EachHeaderCompilesUnderNvrtc) {
    for (const auto& [header, body] : kKernelPerHeader) {
        SCOPED_TRACE(header);
        Program program(kernel_source(header, body), SourceType::cxx, options_for("std_" + header));
        try {
            const ObjectCode code = program.compile(CodeType::cubin, {"use<float>"});
            EXPECT_EQ(code.symbol_map().count("use<float>"), 1u);
        } catch (const CompileError& e) {
            ADD_FAILURE() << e.log();
        }
    }
}

TEST(StandardHeaders, TheBundleListsEveryHeaderOfTheIssue) {
    const HeaderBundle bundle = standard_headers();
    std::vector<std::string> names;
    for (const auto& header : bundle.headers()) names.push_back(header.name);
    for (const char* wanted : {"type_traits", "limits", "climits", "cstdint", "cmath", "tuple",
                               "utility", "cassert", "cstdio"}) {
        EXPECT_NE(std::find(names.begin(), names.end(), wanted), names.end()) << wanted;
    }
}

TEST(StandardHeaders, OffTheHeaderIsNotFound) {
    ProgramOptions options = options_for("std_off");
    options.std_headers = false;
    Program program(kernel_source("type_traits", "out[0] = std::is_void<T>::value;"), SourceType::cxx,
                    options);
    try {
        program.compile(CodeType::cubin);
        ADD_FAILURE() << "compiled without the standard headers";
    } catch (const CompileError& e) {
        EXPECT_NE(e.log().find("type_traits"), std::string::npos) << e.log();
        EXPECT_EQ(e.nvrtc_status(), NVRTC_ERROR_COMPILATION);
    }
    // The folder is on the include path last, only when on.
    const auto flags = Program("__global__ void k() {}", SourceType::cxx, options_for("f")).flags(CodeType::cubin);
    std::string last_include;
    for (const auto& flag : flags)
        if (flag.starts_with("--include-path=")) last_include = flag;
    EXPECT_NE(last_include.find(standard_headers().digest()), std::string::npos) << last_include;
    const auto off = program.flags(CodeType::cubin);
    EXPECT_TRUE(std::none_of(off.begin(), off.end(), [&](const std::string& flag) {
        return flag.find(standard_headers().digest()) != std::string::npos;
    }));
}

TEST(StandardHeaders, CachedLikeAnyHeader) {
    MemoryProgramCache cache;
    const cudacore::test::WarningLog warnings;
    Program program(kernel_source("type_traits", "out[0] = std::is_void<T>::value;"), SourceType::cxx,
                    options_for("std_cached"));
    const ObjectCode first = compile_cached(program, CodeType::cubin, {"use<float>"}, {.cache = &cache});
    EXPECT_TRUE(warnings.seen.empty()) << warnings.seen.front().message;
    // The headers it read include the standard headers' folder: the compile's view saw them.
    std::vector<std::string> headers_read;
    Program traced(program.source(), SourceType::cxx, options_for("std_traced"));
    traced.compile(CodeType::cubin, {"use<float>"}, headers_read);
    EXPECT_TRUE(std::any_of(headers_read.begin(), headers_read.end(), [](const std::string& path) {
        return path.find(standard_headers().digest()) != std::string::npos && path.ends_with("/type_traits");
    })) << headers_read.size();
    const auto misses = cache.stats().misses;
    const ObjectCode again = compile_cached(program, CodeType::cubin, {"use<float>"}, {.cache = &cache});
    EXPECT_EQ(again, first);
    EXPECT_EQ(cache.stats().misses, misses);
}

}  // namespace
