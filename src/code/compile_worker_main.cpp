// cudacore-compile-worker: the check compile of a cached compile (src/code/snapshot_compile.cpp
// has both sides). Its own process, so that its clock and working directory can be moved without
// touching the caller's.
#include "code/snapshot_compile.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace {
long long clock_shift = 0;  // set from the request, before NVRTC is loaded

// Paths, each once, in the order first noted; under `paths_mutex`.
struct PathsOnce {
    std::vector<std::string> in_order;
    std::set<std::string> seen;
    void add(const char* path) {
        if (seen.insert(path).second) in_order.emplace_back(path);
    }
};

// While recording (the compile): the files opened to read, and the paths looked up and not found.
std::atomic<bool> recording{false};
std::mutex paths_mutex;
PathsOnce opened_files;
PathsOnce absent_paths;

void note_opened(const char* path, bool to_read) {
    if (!to_read || !path || !recording.load(std::memory_order_acquire)) return;
    std::lock_guard lock(paths_mutex);
    opened_files.add(path);
}

// A stat that found nothing at `path` (`error`: its errno): where a quoted include is looked for
// first, the trace of one the scan did not find (CompileSnapshot::looked_up_beside_project_text).
void note_absent(const char* path, int error) {
    if (!path || (error != ENOENT && error != ENOTDIR) || !recording.load(std::memory_order_acquire)) return;
    std::lock_guard lock(paths_mutex);
    absent_paths.add(path);
}

// Whether `path` is an ELF file (NVRTC looks up its own libraries, libnvrtc-builtins, before it
// loads them: no header). Read through the system calls, not the definitions below.
bool is_elf(const char* path) {
    const long fd = ::syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    char magic[4] = {};
    const long got = ::syscall(SYS_read, fd, magic, sizeof magic);
    ::syscall(SYS_close, fd);
    return got == 4 && std::memcmp(magic, "\x7f" "ELF", 4) == 0;
}

// A stat that found `path` (`status`, what it filled): recorded where it is a file other than a
// library, as NVRTC's tests of a name (__has_include) find files without opening them.
void note_found(const char* path, const struct stat& status) {
    if (!path || !recording.load(std::memory_order_acquire)) return;
    if (S_ISREG(status.st_mode) && !is_elf(path)) note_opened(path, true);
}

// note_absent for the errno the failed call left, which NVRTC reads next: kept as it was.
void note_absent_keeping_errno(const char* path) {
    const int error = errno;
    note_absent(path, error);
    errno = error;
}

bool mode_reads_only(const char* mode) {
    return mode && mode[0] == 'r' && !std::strchr(mode, '+');
}

template <typename Function>
Function next_definition(const char* name) {
    return reinterpret_cast<Function>(::dlsym(RTLD_NEXT, name));
}
}  // namespace

// NVRTC's front end looks headers up with stat() (__xstat, also for __has_include) and reads them
// with fopen(): these definitions, exported by the executable (CMakeLists.txt), are the ones it
// calls. They record the files it found or opened to read (the check that a snapshot left nothing
// to be read from disk, checked_compile.cpp) and hand over to the C library's. (Its other
// components read their own files with open(), which is left alone.)
extern "C" int __xstat(int version, const char* path, struct stat* status) {
    static const auto real = next_definition<int (*)(int, const char*, struct stat*)>("__xstat");
    // A C library that keeps __xstat only for old binaries may not give it to dlsym: the system
    // call fills the same struct on x86-64.
    const int result = real ? real(version, path, status)
                            : static_cast<int>(::syscall(SYS_newfstatat, AT_FDCWD, path, status, 0));
    if (result == 0) note_found(path, *status);
    else note_absent_keeping_errno(path);
    return result;
}

extern "C" int stat(const char* path, struct stat* status) {
    static const auto real = next_definition<int (*)(const char*, struct stat*)>("stat");
    const int result = real(path, status);
    if (result == 0) note_found(path, *status);
    else note_absent_keeping_errno(path);
    return result;
}

extern "C" FILE* fopen(const char* path, const char* mode) {
    static const auto real = next_definition<FILE* (*)(const char*, const char*)>("fopen");
    FILE* file = real(path, mode);
    if (file) note_opened(path, mode_reads_only(mode));
    return file;
}

extern "C" FILE* fopen64(const char* path, const char* mode) {
    static const auto real = next_definition<FILE* (*)(const char*, const char*)>("fopen64");
    FILE* file = real(path, mode);
    if (file) note_opened(path, mode_reads_only(mode));
    return file;
}


// NVRTC reads the time for __DATE__ and __TIME__ with time(): this definition,
// exported by the executable (CMakeLists.txt), is the one it calls. The real time comes from the
// system call, not from glibc's time(), which this one replaces.
extern "C" time_t time(time_t* out) {
    struct timespec now {};
    ::syscall(SYS_clock_gettime, CLOCK_REALTIME, &now);
    const time_t value = static_cast<time_t>(now.tv_sec + clock_shift);
    if (out) *out = value;
    return value;
}

extern "C" const char* __asan_default_options() {
    return "handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:handle_abort=0:"
           "detect_leaks=0";
}

int main() {
    // NVRTC's own cache of compiled code (~/.nv/ComputeCache) would be read during the compile:
    // not a header, and the code is the same without it (code/compiler_environment.hpp).
    ::setenv("CUDA_CACHE_DISABLE", "1", 1);
    const cudacore::detail::CompileWorkerHooks hooks{
        .move_clock = [](long long seconds) { clock_shift = seconds; },
        .record_opens = [](bool on) { recording.store(on, std::memory_order_release); },
        .opened = [] {
            std::lock_guard lock(paths_mutex);
            return opened_files.in_order;
        },
        .absent = [] {
            std::lock_guard lock(paths_mutex);
            return absent_paths.in_order;
        }};
    return cudacore::detail::compile_worker_main(hooks);
}
