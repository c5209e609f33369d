#include "file_io.hpp"

#include "cudacore/errors.hpp"

#include "support/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

namespace cudacore::cli {

namespace {

struct FileDescriptor {
    int fd = -1;
    ~FileDescriptor() {
        if (fd >= 0) ::close(fd);
    }
};

[[noreturn]] void cannot_read(const std::filesystem::path& path, const std::string& why) {
    throw InvalidArgumentError("cannot read '" + path.string() + "': " + why);
}

[[noreturn]] void cannot_write(const std::filesystem::path& path, const std::string& why) {
    throw std::runtime_error("cannot write '" + path.string() + "': " + why);
}

// A device, FIFO or socket: written in place, every write checked (ENOSPC from /dev/full).
void write_in_place(const std::filesystem::path& path, std::string_view bytes) {
    // Non-blocking open: a FIFO nobody reads is refused (ENXIO) instead of waited on forever.
    FileDescriptor file{::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)};
    if (file.fd < 0) {
        if (errno == ENXIO) cannot_write(path, "it is a FIFO that no process is reading");
        cannot_write(path, std::string("open: ") + std::strerror(errno));
    }
    const int flags = ::fcntl(file.fd, F_GETFL);
    if (flags < 0 || ::fcntl(file.fd, F_SETFL, flags & ~O_NONBLOCK) != 0)
        cannot_write(path, std::string("fcntl: ") + std::strerror(errno));
    const char* cursor = bytes.data();
    std::size_t left = bytes.size();
    while (left > 0) {
        const ssize_t written = ::write(file.fd, cursor, left);
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) cannot_write(path, std::string("write: ") + std::strerror(written < 0 ? errno : EIO));
        cursor += written;
        left -= static_cast<std::size_t>(written);
    }
    // Pipes and most devices cannot be synced (EINVAL); anything else is a real failure.
    if (::fsync(file.fd) != 0 && errno != EINVAL && errno != EROFS && errno != ENOTSUP)
        cannot_write(path, std::string("fsync: ") + std::strerror(errno));
    const int closed = ::close(file.fd);
    file.fd = -1;
    if (closed != 0) cannot_write(path, std::string("close: ") + std::strerror(errno));
}

}  // namespace

std::string read_input_file(const std::filesystem::path& path) {
    FileDescriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
    if (file.fd < 0) cannot_read(path, errno == ENOENT ? "no such file" : std::strerror(errno));
    struct stat info {};
    if (::fstat(file.fd, &info) != 0) cannot_read(path, std::string("fstat: ") + std::strerror(errno));
    if (!S_ISREG(info.st_mode))
        cannot_read(path, "it is " + std::string(detail::file_kind(info.st_mode)) + ", not a regular file");
    if (static_cast<std::uint64_t>(info.st_size) > max_input_size) {
        cannot_read(path, "it is " + std::to_string(info.st_size) + " bytes, more than the " +
                              std::to_string(max_input_size) + "-byte limit for an input file");
    }
    try {
        return detail::read_open_file_bounded(file.fd, path, max_input_size);
    } catch (const std::system_error& e) {
        cannot_read(path, e.code().message());
    } catch (const std::length_error&) {
        cannot_read(path, "it grew past the " + std::to_string(max_input_size) +
                              "-byte limit for an input file while being read");
    }
}

void write_output_file(const std::filesystem::path& path, std::string_view bytes) {
    std::filesystem::path target = path;
    mode_t mode = 0666;  // umask applies, as for any new file
    struct stat info {};
    if (::stat(path.c_str(), &info) == 0) {
        if (S_ISDIR(info.st_mode)) cannot_write(path, "it is a directory");
        if (!S_ISREG(info.st_mode)) return write_in_place(path, bytes);
        mode = info.st_mode & 07777;
        struct stat link {};
        if (::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
            std::error_code error;
            target = std::filesystem::canonical(path, error);
            if (error) cannot_write(path, "resolving the symbolic link: " + error.message());
        }
    } else if (errno != ENOENT) {
        cannot_write(path, std::string("stat: ") + std::strerror(errno));
    }
    try {
        detail::write_file_atomically(target, bytes, mode);
    } catch (const std::system_error& e) {
        cannot_write(path, e.what());
    }
}

}  // namespace cudacore::cli
