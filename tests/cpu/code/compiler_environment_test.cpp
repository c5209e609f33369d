// Every environment variable NVRTC reads while it compiles is one that keys hold or one that
// code/compiler_environment.hpp says does not change its code: this program interposes getenv and
// records the names NVRTC's libraries ask for over compiles to PTX, cubin (with debug and line
// information, with its precompiled headers) and LTO-IR. A newer NVRTC that reads a variable of
// its own fails here until it is placed in one of the two lists. (That a keyed variable moves the
// key, and that no entry made under it serves a process without it, is in cli_cache_test.cpp.)
#include "test_support.hpp"

#include "code/compiler_environment.hpp"
#include "cudacore/program.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <set>
#include <string>

extern char** environ;

namespace {

// The names NVRTC asked for: fixed storage, no allocation (getenv is called from anywhere,
// before main too).
constexpr int kMaxNames = 512;
char recorded[kMaxNames][80];
std::atomic<int> recorded_count{0};
std::atomic<bool> recording{false};

char* lookup(const char* name) {
    const std::size_t length = std::strlen(name);
    for (char** entry = environ; entry && *entry; ++entry)
        if (std::strncmp(*entry, name, length) == 0 && (*entry)[length] == '=') return *entry + length + 1;
    return nullptr;
}

void record(const char* name, const void* caller) {
    if (!recording.load(std::memory_order_acquire)) return;
    Dl_info info{};
    if (::dladdr(caller, &info) == 0 || info.dli_fname == nullptr || std::strstr(info.dli_fname, "nvrtc") == nullptr)
        return;
    const int at = recorded_count.fetch_add(1);
    if (at < kMaxNames) {
        std::strncpy(recorded[at], name, sizeof recorded[at] - 1);
        recorded[at][sizeof recorded[at] - 1] = '\0';
    }
}

}  // namespace

// This program's getenv and secure_getenv, which the libraries it opens call instead of libc's.
extern "C" char* getenv(const char* name) {
    record(name, __builtin_return_address(0));
    return lookup(name);
}
extern "C" char* secure_getenv(const char* name) {
    record(name, __builtin_return_address(0));
    return lookup(name);
}

namespace {

using namespace cudacore;

TEST(CompilerEnvironment, EveryVariableNvrtcReadsIsKeyedOrKnownNotToChangeItsCode) {
    const std::string source =
        "#include <cuda/std/cstdint>\n"
        "extern \"C\" __global__ void k(cuda::std::int32_t* o) { *o = 1; }\n";
    recording.store(true, std::memory_order_release);
    for (const CodeType target : {CodeType::ptx, CodeType::cubin, CodeType::ltoir}) {
        for (const int variant : {0, 1, 2}) {
            ProgramOptions options;
            options.arch = "sm_90";
            options.pch = variant == 2;
            if (variant == 1) {
                options.debug = true;
                options.lineinfo = true;
            }
            if (target == CodeType::ltoir) options.link_time_optimization = true;
            Program(source, SourceType::cxx, options).compile(target);
        }
    }
    recording.store(false, std::memory_order_release);

    const int count = std::min(recorded_count.load(), kMaxNames);
    ASSERT_GT(count, 0) << "no call of NVRTC's to getenv was seen: the interposition did not take";
    std::set<std::string> asked(&recorded[0], &recorded[0] + count);
    for (const std::string& name : asked) {
        const bool keyed = std::ranges::find(detail::nvrtc_keyed_variables, name) != detail::nvrtc_keyed_variables.end();
        const bool unkeyed =
            std::ranges::find(detail::nvrtc_unkeyed_variables, name) != detail::nvrtc_unkeyed_variables.end();
        EXPECT_TRUE(keyed || unkeyed) << "NVRTC reads $" << name
                                      << ", which code/compiler_environment.hpp neither keys nor says is harmless";
    }
    // The variables known to change the code are among those asked (the interposition saw them).
    EXPECT_TRUE(asked.contains("NV_NVVM_VERSION"));
    EXPECT_TRUE(asked.contains("LLVM_OVERRIDE_PRODUCER"));
}

}  // namespace
