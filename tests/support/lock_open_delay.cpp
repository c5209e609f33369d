// Loaded with LD_PRELOAD by the PCH folder tests: an open() or openat() that creates a file named
// "owner.lock" returns only after CUDACORE_TEST_LOCK_OPEN_DELAY_MS milliseconds, so the moment
// between creating a folder's lock file and locking it, a few microseconds in real runs (longer
// on a starved machine), lasts long enough for another process to act in it every time.
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdlib>
#include <cstring>

namespace {

bool names_lock_file(const char* path) {
    const char* slash = std::strrchr(path, '/');
    return std::strcmp(slash ? slash + 1 : path, "owner.lock") == 0;
}

void delay_if_created(const char* path, int flags, int result) {
    if (result < 0 || !(flags & O_CREAT) || !names_lock_file(path)) return;
    const char* ms = std::getenv("CUDACORE_TEST_LOCK_OPEN_DELAY_MS");
    if (ms && *ms) ::usleep(static_cast<useconds_t>(std::strtoul(ms, nullptr, 10) * 1000));
}

mode_t mode_argument(int flags, va_list arguments) {
    return (flags & (O_CREAT | O_TMPFILE)) ? static_cast<mode_t>(va_arg(arguments, int)) : 0;
}

template <typename Function>
Function next(const char* name) {
    return reinterpret_cast<Function>(::dlsym(RTLD_NEXT, name));
}

}  // namespace

extern "C" {

int open(const char* path, int flags, ...) {
    va_list arguments;
    va_start(arguments, flags);
    const mode_t mode = mode_argument(flags, arguments);
    va_end(arguments);
    static auto real = next<int (*)(const char*, int, ...)>("open");
    const int fd = real(path, flags, mode);
    delay_if_created(path, flags, fd);
    return fd;
}

int open64(const char* path, int flags, ...) {
    va_list arguments;
    va_start(arguments, flags);
    const mode_t mode = mode_argument(flags, arguments);
    va_end(arguments);
    static auto real = next<int (*)(const char*, int, ...)>("open64");
    const int fd = real(path, flags, mode);
    delay_if_created(path, flags, fd);
    return fd;
}

int openat(int directory, const char* path, int flags, ...) {
    va_list arguments;
    va_start(arguments, flags);
    const mode_t mode = mode_argument(flags, arguments);
    va_end(arguments);
    static auto real = next<int (*)(int, const char*, int, ...)>("openat");
    const int fd = real(directory, path, flags, mode);
    delay_if_created(path, flags, fd);
    return fd;
}

int openat64(int directory, const char* path, int flags, ...) {
    va_list arguments;
    va_start(arguments, flags);
    const mode_t mode = mode_argument(flags, arguments);
    va_end(arguments);
    static auto real = next<int (*)(int, const char*, int, ...)>("openat64");
    const int fd = real(directory, path, flags, mode);
    delay_if_created(path, flags, fd);
    return fd;
}

}  // extern "C"
