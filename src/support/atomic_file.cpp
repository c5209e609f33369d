#include "support/atomic_file.hpp"
#include "support/file_descriptor.hpp"
#include "support/input_file.hpp"
#include "support/system_call_error.hpp"

#include "support/removed_on_signal.hpp"
#include "support/termination_signals.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <stdexcept>
#include <system_error>
#include <utility>

namespace cudacore::detail {
namespace {


constexpr std::string_view temporary_marker = ".tmp-";

// Eight random bytes from the kernel: no generator state per thread (2.5 KB of TLS in every
// thread of the process; the library's TLS stays small). Where none come, the pid and the
// counter keep the name unique all the same.
std::uint64_t random_word() noexcept {
    std::uint64_t word = 0;
    if (::getrandom(&word, sizeof word, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof word)) word = 0;
    return word;
}

// "." + name + ".tmp-<pid>-<n>-<random>", with the name cut short where the whole would pass the
// directory's limit on a name's length (NAME_MAX), so a file whose own name is up to that limit
// can still be written. Cut at a UTF-8 character boundary.
std::string temporary_name(const std::string& file_name, std::size_t max_length) {
    static std::atomic<std::uint64_t> counter{0};
    const std::string suffix = std::string(temporary_marker) + std::to_string(::getpid()) + "-" +
                               std::to_string(counter++) + "-" + std::to_string(random_word());
    std::size_t keep = file_name.size();
    if (1 + keep + suffix.size() > max_length) {
        keep = max_length > 1 + suffix.size() ? max_length - 1 - suffix.size() : 0;
        while (keep > 0 && (static_cast<unsigned char>(file_name[keep]) & 0xC0) == 0x80) --keep;
    }
    std::string name = ".";  // appended: GCC 12 warns (-Wrestrict, wrongly) on "." + string
    name.append(file_name, 0, keep);
    name += suffix;
    return name;
}

// The longest name the directory takes (NAME_MAX; 255 where it does not say).
std::size_t name_limit(int directory_fd) {
    const long limit = ::fpathconf(directory_fd, _PC_NAME_MAX);
    return limit > 0 ? static_cast<std::size_t>(limit) : 255;
}

}  // namespace

bool atomic_write_temporary_in_use(int directory_fd, const char* file_name) noexcept {
    const FileDescriptor file{
        ::openat(directory_fd, file_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)};
    if (file.fd < 0) return false;
    return ::flock(file.fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
}

bool is_atomic_write_temporary(std::string_view file_name) noexcept {
    return file_name.starts_with(".") && file_name.find(temporary_marker) != std::string_view::npos;
}

std::optional<pid_t> atomic_write_temporary_writer(std::string_view file_name) noexcept {
    if (!is_atomic_write_temporary(file_name)) return std::nullopt;
    const std::string_view rest =
        file_name.substr(file_name.rfind(temporary_marker) + temporary_marker.size());
    pid_t pid = 0;
    const auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), pid);
    if (error != std::errc() || end == rest.data() || end == rest.data() + rest.size() ||
        *end != '-' || pid <= 0)
        return std::nullopt;
    return pid;
}

PendingAtomicWrite::PendingAtomicWrite(int directory_fd, const std::string& file_name,
                                       std::string_view data, mode_t mode,
                                       const std::filesystem::path& display_path, bool sync)
    : directory_fd_(directory_fd), file_name_(file_name), display_path_(display_path) {
    if (file_name.empty() || file_name == "." || file_name == "..")
        throw std::system_error(EISDIR, std::generic_category(),
                                "'" + display_path.string() + "' names no file");
    temporary_ = temporary_name(file_name, name_limit(directory_fd));
    const std::filesystem::path temporary_display = display_path.parent_path() / temporary_;
    // Made inside its registration: a signal that ends the process (through the CLI's handling)
    // removes it too, also one that comes while it is being made.
    FileDescriptor file;
    removed_on_signal_ = RemovedOnSignal::make([&] {
        file.fd = ::openat(directory_fd, temporary_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
        if (file.fd < 0) throw_errno(errno, "open", temporary_display);
        return temporary_display;
    });
    // Held until the file is in place (through a duplicate, so that close() below still reports
    // errors): a cleaner never removes a temporary file whose lock is held. Blocking: a cleaner
    // holds it only for a test. A file system without flock writes unlocked, as before.
    while (::flock(file.fd, LOCK_EX) != 0 && errno == EINTR) {
    }
    lock_fd_ = ::fcntl(file.fd, F_DUPFD_CLOEXEC, 0);
    auto fail = [&](int error, const std::string& call) {
        discard();
        throw_errno(error, call, temporary_display);
    };
    const char* cursor = data.data();
    std::size_t left = data.size();
    while (left > 0) {
        ssize_t written = ::write(file.fd, cursor, left);
        if (written < 0) {
            if (errno == EINTR) continue;
            fail(errno, "write");
        }
        if (written == 0) fail(EIO, "write");
        cursor += written;
        left -= static_cast<std::size_t>(written);
    }
    // The data must be durable before the name points at it, or a power loss could leave an
    // empty or partial file under the final name (without `sync`, the caller flushes it).
    if (sync && ::fsync(file.fd) != 0) fail(errno, "fsync");
    const int closed = ::close(file.fd);
    file.fd = -1;
    if (closed != 0) fail(errno, "close");
}

PendingAtomicWrite::PendingAtomicWrite(PendingAtomicWrite&& other) noexcept
    : directory_fd_(other.directory_fd_),
      file_name_(std::move(other.file_name_)),
      temporary_(std::exchange(other.temporary_, {})),
      display_path_(std::move(other.display_path_)),
      lock_fd_(std::exchange(other.lock_fd_, -1)),
      removed_on_signal_(std::move(other.removed_on_signal_)) {}

PendingAtomicWrite::~PendingAtomicWrite() { discard(); }

void PendingAtomicWrite::discard() noexcept {
    if (!temporary_.empty()) ::unlinkat(directory_fd_, temporary_.c_str(), 0);
    temporary_.clear();
    if (lock_fd_ >= 0) ::close(lock_fd_);
    lock_fd_ = -1;
    removed_on_signal_.release();
}

void PendingAtomicWrite::commit() {
    // A process ending by a signal it takes (the CLI: termination_signals.hpp) makes nothing visible from here on.
    if (termination_requested()) {
        discard();
        wait_if_terminating();
    }
    if (::renameat(directory_fd_, temporary_.c_str(), directory_fd_, file_name_.c_str()) != 0) {
        const int error = errno;
        const std::filesystem::path temporary_display = display_path_.parent_path() / temporary_;
        discard();
        throw_errno(error, "rename to '" + display_path_.string() + "' from", temporary_display);
    }
    temporary_.clear();  // in place: nothing to remove
    discard();
}

void write_file_atomically_at(int directory_fd, const std::string& file_name,
                              std::string_view data, mode_t mode,
                              const std::filesystem::path& display_path) {
    PendingAtomicWrite(directory_fd, file_name, data, mode, display_path, true).commit();
    // Make the rename itself durable; failure here leaves a correct file, so it is not an error.
    ::fsync(directory_fd);
}

void write_file_atomically(const std::filesystem::path& path, std::string_view data, mode_t mode) {
    if (path.empty()) throw std::invalid_argument("an empty path names no file");
    std::filesystem::path directory = path.parent_path();
    if (directory.empty()) directory = ".";
    FileDescriptor dir{::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
    if (dir.fd < 0) throw_errno(errno, "open directory", directory);
    write_file_atomically_at(dir.fd, path.filename().string(), data, mode, path);
}

void write_regular_file(const std::filesystem::path& path, std::string_view data, mode_t mode) {
    if (path.empty()) throw std::invalid_argument("an empty path names no file");
    // What the path leads to, through every link (/dev/stdout -> /proc/self/fd/1 -> a pipe,
    // whose link text names no file): only a regular file, or nothing yet, is written.
    struct stat followed {};
    if (::stat(path.c_str(), &followed) == 0 && !S_ISREG(followed.st_mode)) {
        throw std::invalid_argument("it is " + std::string(file_kind(followed.st_mode)) +
                                    ", not a regular file: refused, and left as it is");
    }
    // Follow symbolic links by hand, so that a dangling one leads to the name it points at
    // (rename() would replace the link itself).
    std::filesystem::path target = path;
    struct stat info {};
    bool exists = false;
    for (int hops = 0;; ++hops) {
        if (hops == 40) throw_errno(ELOOP, "resolving symbolic links of", path);
        if (::lstat(target.c_str(), &info) != 0) {
            if (errno != ENOENT) throw_errno(errno, "lstat", target);
            break;
        }
        if (!S_ISLNK(info.st_mode)) {
            exists = true;
            break;
        }
        std::string link(PATH_MAX, '\0');
        const ssize_t length = ::readlink(target.c_str(), link.data(), link.size());
        if (length < 0) throw_errno(errno, "readlink", target);
        link.resize(static_cast<std::size_t>(length));
        const std::filesystem::path next(link);
        target = next.is_absolute() ? next : target.parent_path() / next;
    }
    if (exists && !S_ISREG(info.st_mode)) {
        throw std::invalid_argument("it is " + std::string(file_kind(info.st_mode)) +
                                    ", not a regular file: refused, and left as it is");
    }
    if (!exists && target.filename().empty())
        throw std::invalid_argument("it names a directory, not a file");
    write_file_atomically(target, data, exists ? (info.st_mode & 07777) : mode);
}

}  // namespace cudacore::detail
