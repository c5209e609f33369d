/* Fault injection for the tests: an LD_PRELOAD library that makes chosen C library calls fail
 * with a chosen errno, so that a test can give a real program a full disk (ENOSPC), no
 * descriptors left (EMFILE) or no processes left (EAGAIN) without root, mounts or limits.
 *
 * Configured by environment variables, read at each call:
 *   CUDACORE_FAULT_CALLS  calls to fail, comma-separated: write, pwrite, fallocate, rename, open,
 *                         pipe, socket, fork, posix_spawn ("pwrite" covers pwrite64, "open"
 *                         open/open64/openat/openat64, "pipe" pipe/pipe2, "socket"
 *                         socket/socketpair, "rename" rename/renameat/renameat2, "fallocate"
 *                         fallocate/posix_fallocate, "posix_spawn" posix_spawn/posix_spawnp).
 *   CUDACORE_FAULT_ERRNO  the errno to fail with, by name: ENOSPC, EMFILE, ENFILE, EAGAIN,
 *                         ENOMEM, EIO, EDQUOT (default: EIO).
 *   CUDACORE_FAULT_PATH   optional: fail only calls on a path containing this text (for write,
 *                         pwrite and fallocate, the path of the descriptor); calls without a path
 *                         (pipe, socket, fork) always match; posix_spawn's path is the program.
 *   CUDACORE_FAULT_AFTER  optional: let this many matching calls succeed first (per process).
 *   CUDACORE_FAULT_TIMES  optional: fail at most this many calls (per process; default: all),
 *                         for a fault that passes (EAGAIN that a retry would not get).
 *   CUDACORE_FAULT_REPORT optional: a file to which one line "CALL PATH" is appended per fault
 *                         injected, so a test can tell that its fault was reached.
 * Calls made inside the C library (stdio, posix_spawn's own clone) are not seen: only calls a
 * program or library makes through the dynamic linker. Built only for the tests. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

static atomic_long matched_calls;

/* Whether `call` (the family name) is in CUDACORE_FAULT_CALLS. */
static int call_chosen(const char* call) {
    const char* list = getenv("CUDACORE_FAULT_CALLS");
    if (!list || !*list) return 0;
    const size_t length = strlen(call);
    for (const char* at = list; *at;) {
        const char* end = strchr(at, ',');
        const size_t item = end ? (size_t)(end - at) : strlen(at);
        if (item == length && strncmp(at, call, length) == 0) return 1;
        if (!end) break;
        at = end + 1;
    }
    return 0;
}

static int chosen_errno(void) {
    static const struct { const char* name; int value; } names[] = {
        {"ENOSPC", ENOSPC}, {"EMFILE", EMFILE}, {"ENFILE", ENFILE}, {"EAGAIN", EAGAIN},
        {"ENOMEM", ENOMEM}, {"EIO", EIO},       {"EDQUOT", EDQUOT}};
    const char* name = getenv("CUDACORE_FAULT_ERRNO");
    if (name)
        for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
            if (strcmp(name, names[i].name) == 0) return names[i].value;
    return EIO;
}

/* The path behind descriptor `fd`, into `out` (empty when unknown). */
static void descriptor_path(int fd, char* out, size_t size) {
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    const ssize_t n = readlink(link, out, size - 1);
    out[n > 0 ? n : 0] = '\0';
}

/* `path` as seen from `directory` (a descriptor or AT_FDCWD), made absolute where it is relative
 * to a descriptor, so that a pattern on the folder matches the *at calls too. */
static const char* at_path(int directory, const char* path, char* out, size_t size) {
    if (!path || path[0] == '/' || directory == AT_FDCWD) return path;
    descriptor_path(directory, out, size);
    const size_t used = strlen(out);
    snprintf(out + used, size - used, "/%s", path);
    return out;
}

static void report(const char* call, const char* path) {
    const char* file = getenv("CUDACORE_FAULT_REPORT");
    if (!file || !*file) return;
    char line[4200];
    const int n = snprintf(line, sizeof line, "%s %s\n", call, path ? path : "-");
    /* The raw system calls: the wrappers below would see these. */
    const int fd = (int)syscall(SYS_openat, AT_FDCWD, file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0) return;
    if (n > 0) (void)!syscall(SYS_write, fd, line, (size_t)(n < (int)sizeof line ? n : (int)sizeof line - 1));
    syscall(SYS_close, fd);
}

/* Whether this call of family `call` on `path` (may be NULL) fails now; sets errno when so. */
static int inject(const char* call, const char* path) {
    if (!call_chosen(call)) return 0;
    const char* pattern = getenv("CUDACORE_FAULT_PATH");
    if (pattern && *pattern && path && !strstr(path, pattern)) return 0;
    const char* after = getenv("CUDACORE_FAULT_AFTER");
    const long skip = after ? atol(after) : 0;
    const char* times = getenv("CUDACORE_FAULT_TIMES");
    const long index = atomic_fetch_add(&matched_calls, 1);
    if (index < skip) return 0;
    if (times && *times && index >= skip + atol(times)) return 0;
    report(call, path);
    errno = chosen_errno();
    return 1;
}

static int inject_fd(const char* call, int fd) {
    if (!call_chosen(call)) return 0;
    char path[4096];
    descriptor_path(fd, path, sizeof path);
    return inject(call, path);
}

#define NEXT(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

ssize_t write(int fd, const void* data, size_t size) {
    if (inject_fd("write", fd)) return -1;
    return NEXT(write)(fd, data, size);
}

ssize_t pwrite(int fd, const void* data, size_t size, off_t offset) {
    if (inject_fd("pwrite", fd)) return -1;
    return NEXT(pwrite)(fd, data, size, offset);
}

ssize_t pwrite64(int fd, const void* data, size_t size, off64_t offset) {
    if (inject_fd("pwrite", fd)) return -1;
    return NEXT(pwrite64)(fd, data, size, offset);
}

int fallocate(int fd, int mode, off_t offset, off_t length) {
    if (inject_fd("fallocate", fd)) return -1;
    return NEXT(fallocate)(fd, mode, offset, length);
}

int posix_fallocate(int fd, off_t offset, off_t length) {
    if (inject_fd("fallocate", fd)) return errno;  /* returns the error, as it does */
    return NEXT(posix_fallocate)(fd, offset, length);
}

int rename(const char* from, const char* to) {
    if (inject("rename", to)) return -1;
    return NEXT(rename)(from, to);
}

int renameat(int from_dir, const char* from, int to_dir, const char* to) {
    char full[4096];
    if (call_chosen("rename") && inject("rename", at_path(to_dir, to, full, sizeof full))) return -1;
    return NEXT(renameat)(from_dir, from, to_dir, to);
}

int renameat2(int from_dir, const char* from, int to_dir, const char* to, unsigned flags) {
    char full[4096];
    if (call_chosen("rename") && inject("rename", at_path(to_dir, to, full, sizeof full))) return -1;
    return NEXT(renameat2)(from_dir, from, to_dir, to, flags);
}

/* open's mode argument is there only with O_CREAT or O_TMPFILE. */
#define MODE_ARGUMENT(flags, last)                                            \
    mode_t mode = 0;                                                          \
    if ((flags) & (O_CREAT | __O_TMPFILE)) {                                  \
        va_list arguments;                                                    \
        va_start(arguments, last);                                            \
        mode = va_arg(arguments, mode_t);                                     \
        va_end(arguments);                                                    \
    }

int open(const char* path, int flags, ...) {
    MODE_ARGUMENT(flags, flags);
    if (inject("open", path)) return -1;
    return NEXT(open)(path, flags, mode);
}

int open64(const char* path, int flags, ...) {
    MODE_ARGUMENT(flags, flags);
    if (inject("open", path)) return -1;
    return NEXT(open64)(path, flags, mode);
}

int openat(int directory, const char* path, int flags, ...) {
    MODE_ARGUMENT(flags, flags);
    char full[4096];
    if (call_chosen("open") && inject("open", at_path(directory, path, full, sizeof full))) return -1;
    return NEXT(openat)(directory, path, flags, mode);
}

int openat64(int directory, const char* path, int flags, ...) {
    MODE_ARGUMENT(flags, flags);
    char full[4096];
    if (call_chosen("open") && inject("open", at_path(directory, path, full, sizeof full))) return -1;
    return NEXT(openat64)(directory, path, flags, mode);
}

/* Whether the call comes from a sanitizer's runtime (libasan.so, libubsan.so, ...): never failed.
 * UBSan tells whether memory is readable with pipe(), and a failure there reads as a bad vtable
 * in the program under test. */
static int from_sanitizer_runtime(const void* caller) {
    Dl_info info;
    if (!caller || !dladdr(caller, &info) || !info.dli_fname) return 0;
    return strstr(info.dli_fname, "san.so") != NULL;
}

int pipe(int fds[2]) {
    if (!from_sanitizer_runtime(__builtin_return_address(0)) && inject("pipe", NULL)) return -1;
    return NEXT(pipe)(fds);
}

int pipe2(int fds[2], int flags) {
    if (!from_sanitizer_runtime(__builtin_return_address(0)) && inject("pipe", NULL)) return -1;
    return NEXT(pipe2)(fds, flags);
}

int socket(int domain, int type, int protocol) {
    if (inject("socket", NULL)) return -1;
    return NEXT(socket)(domain, type, protocol);
}

int socketpair(int domain, int type, int protocol, int fds[2]) {
    if (inject("socket", NULL)) return -1;
    return NEXT(socketpair)(domain, type, protocol, fds);
}

pid_t fork(void) {
    if (inject("fork", NULL)) return -1;
    return NEXT(fork)();
}

int posix_spawn(pid_t* pid, const char* path, const posix_spawn_file_actions_t* actions,
                const posix_spawnattr_t* attributes, char* const argv[], char* const envp[]) {
    if (inject("posix_spawn", path)) return errno;  /* returns the error, as it does */
    return NEXT(posix_spawn)(pid, path, actions, attributes, argv, envp);
}

int posix_spawnp(pid_t* pid, const char* file, const posix_spawn_file_actions_t* actions,
                 const posix_spawnattr_t* attributes, char* const argv[], char* const envp[]) {
    if (inject("posix_spawn", file)) return errno;
    return NEXT(posix_spawnp)(pid, file, actions, attributes, argv, envp);
}
