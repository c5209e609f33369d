#include "headers/standard_header_stubs.hpp"

#include <string>
#include <utility>
#include <vector>

namespace cudacore::detail {

namespace {

// Device code has no exceptions (a throw does not compile): the classes are there so that code
// deriving from them or naming them in declarations compiles, and what() answers as on the host.
constexpr const char* kException = R"(#pragma once
#if __has_include(<cuda/std/__exception/terminate.h>)
#include <cuda/std/__exception/terminate.h>
namespace cuda { namespace std {} }
namespace std {
using namespace ::cuda::std;  // std::terminate
}
#endif
namespace std {
class exception {
public:
    __host__ __device__ exception() noexcept {}
    __host__ __device__ virtual ~exception() {}
    __host__ __device__ virtual const char* what() const noexcept { return "std::exception"; }
};
class bad_exception : public exception {
public:
    __host__ __device__ const char* what() const noexcept override { return "std::bad_exception"; }
};
}
)";

constexpr const char* kStdexcept = R"(#pragma once
#include <exception>
namespace std {
class logic_error : public exception {
public:
    __host__ __device__ explicit logic_error(const char* what) noexcept : what_(what) {}
    __host__ __device__ const char* what() const noexcept override { return what_; }
private:
    const char* what_;
};
class runtime_error : public exception {
public:
    __host__ __device__ explicit runtime_error(const char* what) noexcept : what_(what) {}
    __host__ __device__ const char* what() const noexcept override { return what_; }
private:
    const char* what_;
};
#define CUDACORE_STD_ERROR_CLASS(name, base) \
    class name : public base {               \
    public:                                  \
        __host__ __device__ explicit name(const char* what) noexcept : base(what) {} \
    };
CUDACORE_STD_ERROR_CLASS(domain_error, logic_error)
CUDACORE_STD_ERROR_CLASS(invalid_argument, logic_error)
CUDACORE_STD_ERROR_CLASS(length_error, logic_error)
CUDACORE_STD_ERROR_CLASS(out_of_range, logic_error)
CUDACORE_STD_ERROR_CLASS(range_error, runtime_error)
CUDACORE_STD_ERROR_CLASS(overflow_error, runtime_error)
CUDACORE_STD_ERROR_CLASS(underflow_error, runtime_error)
#undef CUDACORE_STD_ERROR_CLASS
}
)";

// std::type_info is NVRTC's own (a reserved name); typeid needs RTTI, which device code lacks.
constexpr const char* kTypeinfo = R"(#pragma once
#include <exception>
namespace std {
class bad_cast : public exception {
public:
    __host__ __device__ const char* what() const noexcept override { return "std::bad_cast"; }
};
class bad_typeid : public exception {
public:
    __host__ __device__ const char* what() const noexcept override { return "std::bad_typeid"; }
};
}
)";

// NVRTC has the builtins of variadic functions; only the names are missing.
constexpr const char* kCstdarg = R"(#pragma once
#ifndef va_start
typedef __builtin_va_list va_list;
#define va_start(ap, last) __builtin_va_start(ap, last)
#define va_arg(ap, type) __builtin_va_arg(ap, type)
#define va_end(ap) __builtin_va_end(ap)
#define va_copy(dst, src) __builtin_va_copy(dst, src)
#endif
namespace std {
using ::va_list;
}
)";

// Containers, strings, streams and mutexes have no device form: declared only, so declarations
// that name them (a host function's parameters, a friend operator<<) compile, while a use in
// device code fails as one of an incomplete type.
constexpr const char* kString = R"(#pragma once
#include <memory>
namespace std {
template <class CharT> struct char_traits;
template <class CharT, class Traits = char_traits<CharT>, class Allocator = allocator<CharT>>
class basic_string;
using string = basic_string<char>;
using wstring = basic_string<wchar_t>;
using u16string = basic_string<char16_t>;
using u32string = basic_string<char32_t>;
}
)";

constexpr const char* kVector = R"(#pragma once
#include <memory>
namespace std {
template <class T, class Allocator = allocator<T>> class vector;
}
)";

constexpr const char* kMap = R"(#pragma once
#include <functional>
#include <memory>
#include <utility>
namespace std {
template <class Key, class T, class Compare = less<Key>, class Allocator = allocator<pair<const Key, T>>>
class map;
template <class Key, class T, class Compare = less<Key>, class Allocator = allocator<pair<const Key, T>>>
class multimap;
}
)";

constexpr const char* kStack = R"(#pragma once
#include <memory>
namespace std {
template <class T, class Allocator = allocator<T>> class deque;
template <class T, class Container = deque<T>> class stack;
}
)";

// <iosfwd>; <iostream>, <istream>, <ostream>, <sstream> and <iomanip> include it.
constexpr const char* kStreamDeclarations = R"(#pragma once
#include <string>
namespace std {
class ios_base;
template <class CharT, class Traits = char_traits<CharT>> class basic_ios;
template <class CharT, class Traits = char_traits<CharT>> class basic_streambuf;
template <class CharT, class Traits = char_traits<CharT>> class basic_istream;
template <class CharT, class Traits = char_traits<CharT>> class basic_ostream;
template <class CharT, class Traits = char_traits<CharT>> class basic_iostream;
template <class CharT, class Traits = char_traits<CharT>, class Allocator = allocator<CharT>>
class basic_stringbuf;
template <class CharT, class Traits = char_traits<CharT>, class Allocator = allocator<CharT>>
class basic_istringstream;
template <class CharT, class Traits = char_traits<CharT>, class Allocator = allocator<CharT>>
class basic_ostringstream;
template <class CharT, class Traits = char_traits<CharT>, class Allocator = allocator<CharT>>
class basic_stringstream;
using ios = basic_ios<char>;
using streambuf = basic_streambuf<char>;
using istream = basic_istream<char>;
using ostream = basic_ostream<char>;
using iostream = basic_iostream<char>;
using stringbuf = basic_stringbuf<char>;
using istringstream = basic_istringstream<char>;
using ostringstream = basic_ostringstream<char>;
using stringstream = basic_stringstream<char>;
}
)";

constexpr const char* kMutex = R"(#pragma once
namespace std {
class mutex;
class recursive_mutex;
class timed_mutex;
class recursive_timed_mutex;
struct once_flag;
template <class Mutex> class lock_guard;
template <class Mutex> class unique_lock;
template <class... Mutexes> class scoped_lock;
}
)";

constexpr const char* kSysTime = R"(#pragma once
#include <ctime>
struct timeval {
    time_t tv_sec;
    long tv_usec;
};
struct timezone {
    int tz_minuteswest;
    int tz_dsttime;
};
)";

// The C++ ABI's demangler is the host's: only the namespace (abi::) is there.
constexpr const char* kCxxabi = R"(#pragma once
namespace __cxxabiv1 {}
namespace abi = __cxxabiv1;
)";

constexpr const char* kStreamHeaders[] = {"iostream", "istream", "ostream", "sstream", "iomanip"};

}  // namespace

std::vector<BundledHeader> standard_header_stubs() {
    std::vector<BundledHeader> headers = {
        {"exception", kException}, {"stdexcept", kStdexcept}, {"typeinfo", kTypeinfo},
        {"cstdarg", kCstdarg},     {"string", kString},       {"vector", kVector},
        {"map", kMap},             {"stack", kStack},         {"mutex", kMutex},
        {"sys/time.h", kSysTime},  {"cxxabi.h", kCxxabi},
        {"iosfwd", kStreamDeclarations},
    };
    for (const char* name : kStreamHeaders) {
        headers.push_back({name, "// <" + std::string(name) + "> under NVRTC (cudacore): the stream classes declared.\n"
                                 "#pragma once\n#include <iosfwd>\n"});
    }
    return headers;
}

}  // namespace cudacore::detail
