// Opens the cudacore library with dlopen, as a plugin or a language binding does (the program
// is linked against nothing of cudacore's), and calls into it: version(), and on the main thread
// (started before the library was opened) and on a thread started after, the driver-log ring,
// thread-local state that the library reaches through its own TLS. Prints "loaded: VERSION" and
// exits 0, or says what failed and exits 1.
//
//   loadable_dlopen_probe LIBRARY
#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

// The symbols called (their C++ names in the comments; signatures as in the library's headers).
constexpr const char* kVersion = "_ZN8cudacore7versionEv";  // const char* cudacore::version() noexcept
// void cudacore::detail::driver_log_callback(void*, CUlogLevel, char*, std::size_t) noexcept
constexpr const char* kCallback = "_ZN8cudacore6detail19driver_log_callbackEPv15CUlogLevel_enumPcm";
// std::vector<std::string> cudacore::detail::take_driver_log(std::string_view)
constexpr const char* kTake = "_ZN8cudacore6detail15take_driver_logB5cxx11ESt17basic_string_viewIcSt11char_traitsIcEE";

using Version = const char* (*)() noexcept;
using Callback = void (*)(void*, int, char*, std::size_t) noexcept;
using Take = std::vector<std::string> (*)(std::string_view);

// A line given to the ring comes back from it, on the calling thread.
bool ring_keeps_a_line(Callback callback, Take take, const std::string& text) {
    std::string line = text;
    callback(nullptr, 0 /* CU_LOG_LEVEL_ERROR */, line.data(), line.size());
    const std::vector<std::string> lines = take({});
    return lines.size() == 1 && lines[0] == text;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: loadable_dlopen_probe LIBRARY\n");
        return 2;
    }
    void* library = ::dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        std::printf("dlopen failed: %s\n", ::dlerror());
        return 1;
    }
    const auto version = reinterpret_cast<Version>(::dlsym(library, kVersion));
    const auto callback = reinterpret_cast<Callback>(::dlsym(library, kCallback));
    const auto take = reinterpret_cast<Take>(::dlsym(library, kTake));
    if (!version || !callback || !take) {
        std::printf("a symbol is missing: version %s, driver_log_callback %s, take_driver_log %s\n",
                    version ? "found" : "missing", callback ? "found" : "missing", take ? "found" : "missing");
        return 1;
    }
    bool other_thread = false;
    std::thread([&] { other_thread = ring_keeps_a_line(callback, take, "from a thread started after"); }).join();
    const bool main_thread = ring_keeps_a_line(callback, take, "from the main thread");
    if (!main_thread || !other_thread) {
        std::printf("thread-local state: main thread %s, new thread %s\n", main_thread ? "ok" : "wrong",
                    other_thread ? "ok" : "wrong");
        return 1;
    }
    std::printf("loaded: %s\n", version());
    return 0;
}
