#include "support/input_file.hpp"

#include "support/system_call_error.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <system_error>

namespace cudacore::detail {
namespace {

// Without blocking: opening a FIFO for reading would otherwise wait for a writer forever (a
// regular file ignores the flag); a terminal never becomes the controlling one.
constexpr int input_open_flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;


}  // namespace

std::string_view file_kind(mode_t mode) noexcept {
    if (S_ISREG(mode)) return "a regular file";
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISLNK(mode)) return "a symbolic link";
    return "not a regular file";
}

OpenedInputFile open_input_file(const std::filesystem::path& path) {
    OpenedInputFile opened;
    opened.file = FileDescriptor(::open(path.c_str(), input_open_flags));
    if (opened.file.fd < 0) {
        opened.refused = errno == ENOENT ? "no such file" : errno_name_and_text(errno);
        return opened;
    }
    struct stat info {};
    if (::fstat(opened.file.fd, &info) != 0) {
        opened.refused = "fstat: " + errno_name_and_text(errno);
        return opened;
    }
    opened.size = static_cast<std::uint64_t>(info.st_size);
    opened.mode = info.st_mode;
    opened.device = static_cast<std::uint64_t>(info.st_dev);
    opened.inode = static_cast<std::uint64_t>(info.st_ino);
    if (!S_ISREG(info.st_mode)) opened.refused = "it is " + std::string(file_kind(info.st_mode)) + ", not a regular file";
    return opened;
}

std::string read_open_file_bounded(int fd, const std::filesystem::path& path,
                                   std::uint64_t max_size) {
    struct stat info {};
    if (::fstat(fd, &info) != 0) throw_errno(errno, "fstat", path);
    if (!S_ISREG(info.st_mode)) {
        throw std::system_error(S_ISDIR(info.st_mode) ? EISDIR : EINVAL, std::generic_category(),
                                "'" + path.string() + "' is " + std::string(file_kind(info.st_mode)) +
                                    ", not a regular file");
    }
    if (static_cast<std::uint64_t>(info.st_size) > max_size) {
        throw std::length_error("'" + path.string() + "' is " + std::to_string(info.st_size) +
                                " bytes, more than the limit of " + std::to_string(max_size));
    }
    std::string contents(static_cast<std::size_t>(info.st_size), '\0');
    std::size_t done = 0;
    while (done < contents.size()) {
        ssize_t got = ::read(fd, contents.data() + done, contents.size() - done);
        if (got < 0) {
            if (errno == EINTR) continue;
            throw_errno(errno, "read", path);
        }
        if (got == 0) break;  // shrank while reading: return what is there, the parser decides
        done += static_cast<std::size_t>(got);
    }
    contents.resize(done);
    return contents;
}

std::string read_file_bounded(const std::filesystem::path& path, std::uint64_t max_size) {
    const FileDescriptor file{::open(path.c_str(), input_open_flags)};
    if (file.fd < 0) throw_errno(errno, "open", path);
    return read_open_file_bounded(file.fd, path, max_size);
}

}  // namespace cudacore::detail
