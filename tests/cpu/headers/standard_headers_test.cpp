// The C++ standard headers nvcc code includes compile under NVRTC through cudacore's standard
// headers (ProgramOptions::std_headers): a kernel per header, the option's off switch, and the
// program cache keying a compile that reads them like any header. No GPU: explicit arch.
#include "test_support.hpp"

#include "cudacore/cached_compile.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/memory_program_cache.hpp"
#include "cudacore/program.hpp"
#include "cudacore/standard_headers.hpp"
#include "headers/bundle_folder.hpp"

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
    {"algorithm", "int v[4] = {3, 1, 2, 0}; std::reverse(v, v + 4);\n"
                  "out[0] = std::max(v[0], v[3]) + *std::max_element(v, v + 4) + std::min({1, 2, 3});"},
    {"initializer_list", "std::initializer_list<int> list = {1, 2}; out[0] = list.size();"},
    {"new", "alignas(T) unsigned char buffer[sizeof(T)]; T* p = new (buffer) T(2);\n"
            "out[0] = *std::launder(p);"},
    {"memory", "out[0] = *std::addressof(out[1]); std::destroy_at(std::addressof(out[1]));"},
    {"ctime", "std::clock_t c = clock(); std::time_t t = 0; out[0] = T(c - c) + T(t);"},
    {"time.h", "clock_t c = clock(); out[0] = T(c - c);"},
    {"memory.h", "memcpy(out, out + 1, sizeof(T));"},
    {"stdexcept", "std::out_of_range e(\"index\"); const std::exception& base = e; out[0] = base.what()[0];"},
    {"typeinfo", "std::bad_cast e; out[0] = e.what()[0];"},
    {"sys/time.h", "timeval tv{1, 2}; out[0] = T(tv.tv_sec + tv.tv_usec);"},
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
    for (const char* wanted : {"type_traits", "limits", "climits", "cstdint", "cmath", "tuple", "utility", "cassert",
                               "cstdio", "algorithm", "initializer_list", "new", "memory", "ctime", "time.h",
                               "cstdarg", "stdarg.h", "exception", "stdexcept", "typeinfo", "string", "vector",
                               "map", "stack", "iostream", "istream", "ostream", "sstream", "iomanip", "mutex",
                               "memory.h", "sys/time.h", "cxxabi.h"}) {
        EXPECT_NE(std::find(names.begin(), names.end(), wanted), names.end()) << wanted;
    }
}

// Code written for the host: it includes headers with no device form, declares host functions
// that name their types, and uses variadic arguments; with unannotated functions compiled as
// device functions (jitify's defaults), it compiles.
TEST(StandardHeaders, HostLookingCodeCompilesWithDefaultDevice) {
    const std::string source = R"(
#include <cstdarg>
#include <stdarg.h>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>
#include <map>
#include <stack>
#include <iostream>
#include <istream>
#include <ostream>
#include <sstream>
#include <iomanip>
#include <mutex>
#include <cxxabi.h>
struct Point { float x; };
std::ostream& operator<<(std::ostream& os, const Point& p);
void report(const std::vector<int>& v, std::map<std::string, int>& m, std::stack<int>* s, std::mutex& mu);
int sum(int n, ...) {
    va_list args;
    va_start(args, n);
    int total = 0;
    for (int i = 0; i < n; ++i) total += va_arg(args, int);
    va_end(args);
    return total;
}
struct Mine : std::runtime_error {
    Mine() : std::runtime_error("mine") {}
};
__global__ void use(int* out) {
    Mine e;
    out[0] = sum(3, 1, 2, 3) + e.what()[0];
}
)";
    ProgramOptions options = options_for("std_host_looking");
    options.device_as_default_execution_space = true;
    Program program(source, SourceType::cxx, options);
    try {
        const ObjectCode code = program.compile(CodeType::cubin, {"use"});
        EXPECT_EQ(code.symbol_map().count("use"), 1u);
    } catch (const CompileError& e) {
        ADD_FAILURE() << e.log();
    }
}

// std::numeric_limits is specializable for a program's own types, fully and partially; const
// types take the type's specialization; the standard types keep CCCL's values.
TEST(StandardHeaders, NumericLimitsIsSpecializable) {
    const std::string source = R"(
#include <limits>
#include <type_traits>
struct Half { float v; };
namespace std {
template <> struct numeric_limits<Half> {
    static constexpr bool is_specialized = true;
    __device__ static Half max() { return {65504.f}; }
};
}
template <class T> struct Wrapped { T v; };
template <class T> struct std::numeric_limits<Wrapped<T>> {
    static constexpr bool is_specialized = true;
    static constexpr int digits = std::numeric_limits<T>::digits;
};
static_assert(std::numeric_limits<Half>::is_specialized, "");
static_assert(std::numeric_limits<const Half>::is_specialized, "");
static_assert(std::numeric_limits<Wrapped<float>>::digits == 24, "");
static_assert(!std::numeric_limits<Half*>::is_specialized, "");
static_assert(std::numeric_limits<const volatile int>::digits == 31, "");
static_assert(std::numeric_limits<float>::max() > 3e38f, "");
__global__ void use(float* out) { out[0] = std::numeric_limits<Half>::max().v + std::numeric_limits<float>::lowest(); }
)";
    Program program(source, SourceType::cxx, options_for("std_numeric_limits"));
    try {
        program.compile(CodeType::cubin, {"use"});
    } catch (const CompileError& e) {
        ADD_FAILURE() << e.log();
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
        // The message leads to the option.
        EXPECT_NE(std::string(e.what()).find("hint: set ProgramOptions::std_headers = true for cudacore's "
                                             "<type_traits>"),
                  std::string::npos)
            << e.what();
    }
    // The folder is on the include path last, only when on.
    const auto flags = Program("__global__ void k() {}", SourceType::cxx, options_for("f")).flags(CodeType::cubin);
    std::string last_include;
    for (const auto& flag : flags)
        if (flag.starts_with("--include-path=")) last_include = flag;
    const std::string folder_name = detail::bundle_folder_name(standard_headers());
    EXPECT_NE(last_include.find(folder_name), std::string::npos) << last_include;
    const auto off = program.flags(CodeType::cubin);
    EXPECT_TRUE(std::none_of(off.begin(), off.end(), [&](const std::string& flag) {
        return flag.find(folder_name) != std::string::npos;
    }));
}

// Where the environment names no cache folder (a service or container without HOME), the
// headers come from a folder of the process's own in the temporary directory: still on.
TEST(StandardHeaders, WithoutACacheFolderTheyComeFromAFolderOfTheProcess) {
    const cudacore::test::ScopedEnv cache_dir("CUDACORE_CACHE_DIR", nullptr);
    const cudacore::test::ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
    const cudacore::test::ScopedEnv home("HOME", nullptr);
    const cudacore::test::ScopedEnv disabled("CUDACORE_DISABLE_CACHE", nullptr);
    const cudacore::test::WarningLog warnings;
    const std::string folder = standard_headers().folder().string();
    EXPECT_NE(folder.find("/cudacore-bundles-"), std::string::npos) << folder;
    Program program(kernel_source("cstdint", "out[0] = sizeof(std::uint64_t) + INT32_MAX;"), SourceType::cxx,
                    options_for("std_without_home"));
    try {
        EXPECT_EQ(program.compile(CodeType::cubin, {"use<float>"}).symbol_map().count("use<float>"), 1u);
    } catch (const CompileError& e) {
        ADD_FAILURE() << e.what() << "\n" << e.log();
    }
    EXPECT_TRUE(warnings.seen.empty()) << warnings.seen.front().message;
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
        return path.find(detail::bundle_folder_name(standard_headers())) != std::string::npos &&
               path.ends_with("/type_traits");
    })) << headers_read.size();
    const auto misses = cache.stats().misses;
    const ObjectCode again = compile_cached(program, CodeType::cubin, {"use<float>"}, {.cache = &cache});
    EXPECT_EQ(again, first);
    EXPECT_EQ(cache.stats().misses, misses);
}

// <new> and <exception> test with __has_include which CCCL header to include: a cached compile
// gives the code a plain one does, and is found again.
TEST(StandardHeaders, HasIncludeFormsCachedAsCompiled) {
    MemoryProgramCache cache;
    const cudacore::test::WarningLog warnings;
    const std::string source = "#include <new>\n#include <exception>\n"
                               "extern \"C\" __global__ void use(float* out) {\n"
                               "    float* p = new (out) float(2); out[1] = *std::launder(p);\n}\n";
    Program program(source, SourceType::cxx, options_for("std_has_include"));
    const ObjectCode cached = compile_cached(program, CodeType::cubin, {}, {.cache = &cache});
    EXPECT_TRUE(warnings.seen.empty()) << warnings.seen.front().message;
    Program plain(source, SourceType::cxx, options_for("std_has_include"));
    EXPECT_EQ(cached, plain.compile(CodeType::cubin));
    const auto misses = cache.stats().misses;
    EXPECT_EQ(compile_cached(program, CodeType::cubin, {}, {.cache = &cache}), cached);
    EXPECT_EQ(cache.stats().misses, misses);
}

// NVRTC refuses a function without __host__ or __device__; the error's message names the option
// that compiles it as a device function, and with it the program compiles.
TEST(StandardHeaders, UnannotatedFunctionHintsAtDefaultDevice) {
    const std::string source = "int twice(int x) { return 2 * x; }\n"
                               "extern \"C\" __global__ void use(int* out) { out[0] = twice(out[1]); }\n";
    ProgramOptions options = options_for("std_unannotated");
    options.std_headers = false;
    try {
        Program(source, SourceType::cxx, options).compile(CodeType::cubin);
        ADD_FAILURE() << "an unannotated function compiled without -default-device";
    } catch (const CompileError& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find("host functions are not allowed in JIT mode"), std::string::npos) << message;
        EXPECT_NE(message.find("; hint: set ProgramOptions::device_as_default_execution_space = true"),
                  std::string::npos)
            << message;
        EXPECT_NE(e.log().find("\ncudacore hint: set ProgramOptions::device_as_default_execution_space"),
                  std::string::npos)
            << e.log();
        EXPECT_EQ(message.find("std_headers"), std::string::npos) << message;  // no header was missing
    }
    options.device_as_default_execution_space = true;
    EXPECT_NO_THROW(Program(source, SourceType::cxx, options).compile(CodeType::cubin));
    // A variable NVRTC takes for a host one (a class's static data member) leads there too.
    options.device_as_default_execution_space.reset();
    const std::string variable = "struct Settings { static int level; };\nint Settings::level;\n"
                                 "extern \"C\" __global__ void use(int* out) { out[0] = Settings::level; }\n";
    try {
        Program(variable, SourceType::cxx, options).compile(CodeType::cubin);
        ADD_FAILURE() << "a static data member compiled without -default-device";
    } catch (const CompileError& e) {
        EXPECT_NE(std::string(e.what()).find("; hint: set ProgramOptions::device_as_default_execution_space = true"),
                  std::string::npos)
            << e.what();
    }
    options.device_as_default_execution_space = true;
    EXPECT_NO_THROW(Program(variable, SourceType::cxx, options).compile(CodeType::cubin));
}

// A program compiled from header bundles is pointed at standard_headers() as a bundle, and only
// for the standard headers it misses.
TEST(StandardHeaders, BundledProgramHintsAtTheStandardBundle) {
    ProgramOptions options = options_for("std_bundled_hint");
    options.std_headers = false;
    options.pch.reset();
    options.header_bundles = {HeaderBundle::from_headers({{"mine.h", "#pragma once\n"}}, "mine")};
    try {
        Program("#include <mine.h>\n#include <vector>\n#include <not_standard.h>\n__global__ void k() {}\n",
                SourceType::cxx, options)
            .compile(CodeType::cubin);
        ADD_FAILURE() << "compiled without <vector>";
    } catch (const CompileError& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find("hint: add standard_headers() to ProgramOptions::header_bundles for cudacore's "
                               "<vector> ("),
                  std::string::npos)
            << message;
        EXPECT_EQ(message.find("not_standard.h>"), std::string::npos) << message;
    }
}

// A program of templates only that includes <algorithm> (CCCL's names in an unnamed namespace
// carry NVRTC's translation unit id): cached without a warning, and found again.
TEST(StandardHeaders, AlgorithmInAProgramOfTemplatesIsCached) {
    MemoryProgramCache cache;
    const cudacore::test::WarningLog warnings;
    Program program(kernel_source("algorithm", "out[0] = std::max(T(1), out[1]);"), SourceType::cxx,
                    options_for("std_algorithm_cached"));
    const ObjectCode first = compile_cached(program, CodeType::cubin, {"use<float>"}, {.cache = &cache});
    EXPECT_TRUE(warnings.seen.empty()) << warnings.seen.front().message;
    EXPECT_EQ(cache.stats().insertions, 1u);
    const auto misses = cache.stats().misses;
    EXPECT_EQ(compile_cached(program, CodeType::cubin, {"use<float>"}, {.cache = &cache}), first);
    EXPECT_EQ(cache.stats().misses, misses);
}

}  // namespace
