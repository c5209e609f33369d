#include "cudacore/standard_headers.hpp"

#include "headers/standard_headers.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/warnings.hpp"
#include "headers/bundle_folder.hpp"
#include "headers/standard_header_stubs.hpp"

#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace cudacore {

namespace {

// The headers CCCL has under <cuda/std/...>: each includes CCCL's and puts its names in std.
constexpr const char* kForwarded[] = {
    "array",    "bit",      "cassert",    "cfloat",           "climits",  "complex", "cstddef", "cstdint",
    "cstdlib",  "cstring",  "ctime",      "functional",       "initializer_list",  "iterator", "limits",
    "memory",   "numeric",  "optional",   "ratio",            "span",     "tuple",   "type_traits",
    "utility",  "variant",
};

// Headers CCCL has under another name in the CCCL of some toolkits (<cuda/std/__algorithm_>
// before <cuda/std/algorithm>): the first that exists.
constexpr std::pair<const char*, const char*> kForwardedOrElse[] = {
    {"algorithm", "__algorithm_"},
    {"new", "__new_"},
};

std::string forwarding_header(const std::string& name) {
    return "// <" + name + "> under NVRTC (cudacore): CCCL's <cuda/std/" + name +
           ">, its names in namespace std.\n#pragma once\n#include <cuda/std/" + name +
           ">\nnamespace cuda { namespace std {} }  // for headers that declare nothing in it\n"
           "namespace std {\nusing namespace ::cuda::std;\n}\n";
}

std::string forwarding_header_or_else(const std::string& name, const std::string& other) {
    return "// <" + name + "> under NVRTC (cudacore): CCCL's <cuda/std/" + name +
           ">, its names in namespace std.\n#pragma once\n#if __has_include(<cuda/std/" + name +
           ">)\n#include <cuda/std/" + name + ">\n#else\n#include <cuda/std/" + other +
           ">\n#endif\nnamespace cuda { namespace std {} }\nnamespace std {\nusing namespace ::cuda::std;\n}\n";
}

// std::numeric_limits is a template of std's own, CCCL's by default, so that a program can
// specialize it for its types (a using-directive's names cannot be specialized as std:: names).
// const and volatile types take the specialization of the type, as the standard says.
constexpr const char* kNumericLimits = R"(namespace std {
template <class T> struct numeric_limits : ::cuda::std::numeric_limits<T> {};
template <class T> struct numeric_limits<const T> : numeric_limits<T> {};
template <class T> struct numeric_limits<volatile T> : numeric_limits<T> {};
template <class T> struct numeric_limits<const volatile T> : numeric_limits<T> {};
}
)";

// CCCL's <cuda/std/cmath> leaves out some of the device math library's functions.
constexpr const char* kCmath = R"(// <cmath> under NVRTC (cudacore): CCCL's <cuda/std/cmath>, its names in namespace std, and the
// device math functions CCCL leaves out (fma, fmod, erf...) as std:: names too.
#pragma once
#include <cuda/std/cmath>
namespace std {
using namespace ::cuda::std;
using ::erf;
using ::erfc;
using ::fdim;
using ::fma;
using ::fmod;
using ::modf;
using ::remainder;
using ::remquo;
}
)";

// Device code has printf built in; <cstdio> names it in std too.
constexpr const char* kCstdio = R"(// <cstdio> under NVRTC (cudacore): device code's built-in printf, also as std::printf.
#pragma once
namespace std {
using ::printf;
}
)";

// CCCL's <cuda/std/cfloat> defines nothing under NVRTC: the IEEE-754 values of float and double.
constexpr const char* kCfloatMacros = R"(#ifndef FLT_RADIX
#define FLT_RADIX 2
#define FLT_MANT_DIG 24
#define DBL_MANT_DIG 53
#define FLT_DIG 6
#define DBL_DIG 15
#define FLT_DECIMAL_DIG 9
#define DBL_DECIMAL_DIG 17
#define DECIMAL_DIG 17
#define FLT_MIN_EXP (-125)
#define DBL_MIN_EXP (-1021)
#define FLT_MIN_10_EXP (-37)
#define DBL_MIN_10_EXP (-307)
#define FLT_MAX_EXP 128
#define DBL_MAX_EXP 1024
#define FLT_MAX_10_EXP 38
#define DBL_MAX_10_EXP 308
#define FLT_MAX 3.40282347e+38F
#define DBL_MAX 1.7976931348623157e+308
#define FLT_EPSILON 1.19209290e-07F
#define DBL_EPSILON 2.2204460492503131e-16
#define FLT_MIN 1.17549435e-38F
#define DBL_MIN 2.2250738585072014e-308
#define FLT_TRUE_MIN 1.40129846e-45F
#define DBL_TRUE_MIN 4.9406564584124654e-324
#endif
)";

// The C forms, each including its C++ header.
constexpr std::pair<const char*, const char*> kCForms[] = {
    {"assert.h", "cassert"}, {"float.h", "cfloat"},   {"limits.h", "climits"}, {"math.h", "cmath"},
    {"stddef.h", "cstddef"}, {"stdint.h", "cstdint"}, {"stdio.h", "cstdio"},   {"stdlib.h", "cstdlib"},
    {"string.h", "cstring"}, {"memory.h", "cstring"}, {"stdarg.h", "cstdarg"}, {"time.h", "ctime"},
};

std::vector<BundledHeader> make_headers() {
    std::vector<BundledHeader> headers;
    for (const char* name : kForwarded) {
        std::string content = forwarding_header(name);
        if (std::string(name) == "cfloat") content += kCfloatMacros;
        if (std::string(name) == "limits") content += kNumericLimits;
        headers.push_back({name, std::move(content)});
    }
    for (const auto& [name, other] : kForwardedOrElse) headers.push_back({name, forwarding_header_or_else(name, other)});
    for (BundledHeader& stub : detail::standard_header_stubs()) headers.push_back(std::move(stub));
    headers.push_back({"cmath", kCmath});
    headers.push_back({"cstdio", kCstdio});
    for (const auto& [c_name, cxx_name] : kCForms) {
        headers.push_back({c_name, "// <" + std::string(c_name) + "> under NVRTC (cudacore).\n#pragma once\n#include <" +
                                       cxx_name + ">\n"});
    }
    return headers;
}

}  // namespace

HeaderBundle standard_headers() {
    // Leaked on purpose: usable from static destructors.
    static const auto* bundle = new HeaderBundle(HeaderBundle::from_headers(make_headers(), "cudacore-standard-headers"));
    return *bundle;
}

namespace detail {

std::string standard_headers_folder() {
    const HeaderBundle bundle = standard_headers();
    try {
        return bundle_folder(bundle).string();
    } catch (const Error& e) {
        static auto* warned = new std::pair<std::mutex, std::set<std::string>>;
        {
            std::lock_guard lock(warned->first);
            if (!warned->second.insert(e.what()).second) return {};
        }
        warn(WarningKind::standard_headers_off,
             std::string("the standard headers (<type_traits>, <cstdint>...) are off: ") + e.what());
        return {};
    }
}

std::string standard_headers_folder_problem() {
    try {
        bundle_folder(standard_headers());
        return {};
    } catch (const Error& e) {
        return e.what();
    }
}

void await_standard_headers_folder(const GiveUp& give_up) {
    try {
        hold_bundle_folder(standard_headers(), give_up);
    } catch (const Error&) {
        // Cancelled, or no folder to be had: the caller's check and its flags() say which.
    }
}

std::string standard_headers_key_flag(const std::string& flag) {
    static const std::string prefix = "--include-path=";
    if (!flag.starts_with(prefix)) return flag;
    // Only the standard headers' folder ends in its name below a header-bundles folder. Its
    // name and the flag's keyed form are worked out once per process (leaked: exit-safe).
    struct Names {
        std::string folder_suffix;
        std::string keyed;
    };
    static const auto* names = [] {
        const HeaderBundle bundle = standard_headers();
        return new Names{"/" + bundle_folder_name(bundle),
                         prefix + "<cudacore standard headers " + bundle.digest() + ">"};
    }();
    if (!flag.ends_with(names->folder_suffix) || flag.find("bundles") == std::string::npos) return flag;
    return names->keyed;
}

}  // namespace detail

}  // namespace cudacore
