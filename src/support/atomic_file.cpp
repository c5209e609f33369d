#include "support/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <random>
#include <stdexcept>
#include <system_error>

namespace cudacore::detail {
namespace {

[[noreturn]] void throw_errno(int error, const std::string& call, const std::filesystem::path& path) {
    throw std::system_error(error, std::generic_category(), call + " '" + path.string() + "'");
}

// Closes a descriptor on scope exit (errors on close of a read-only or already-synced file are
// not actionable).
struct FileDescriptor {
    int fd = -1;
    ~FileDescriptor() {
        if (fd >= 0) ::close(fd);
    }
};

std::string temporary_name(const std::filesystem::path& path) {
    static std::atomic<std::uint64_t> counter{0};
    thread_local std::mt19937_64 random{std::random_device{}()};
    return "." + path.filename().string() + ".tmp-" + std::to_string(::getpid()) + "-" +
           std::to_string(counter++) + "-" + std::to_string(random());
}

}  // namespace

bool is_atomic_write_temporary(std::string_view file_name) noexcept {
    return file_name.starts_with(".") && file_name.find(".tmp-") != std::string_view::npos;
}

void write_file_atomically(const std::filesystem::path& path, std::string_view data, mode_t mode) {
    std::filesystem::path directory = path.parent_path();
    if (directory.empty()) directory = ".";
    const std::filesystem::path temporary = directory / temporary_name(path);

    FileDescriptor file{::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)};
    if (file.fd < 0) throw_errno(errno, "open", temporary);
    auto fail = [&](int error, const std::string& call) {
        ::unlink(temporary.c_str());
        throw_errno(error, call, temporary);
    };
    const char* cursor = data.data();
    std::size_t left = data.size();
    while (left > 0) {
        ssize_t written = ::write(file.fd, cursor, left);
        if (written < 0) {
            if (errno == EINTR) continue;
            fail(errno, "write");
        }
        cursor += written;
        left -= static_cast<std::size_t>(written);
    }
    // The data must be durable before the name points at it, or a power loss could leave an
    // empty or partial file under the final name.
    if (::fsync(file.fd) != 0) fail(errno, "fsync");
    if (::close(file.fd) != 0) {
        file.fd = -1;
        fail(errno, "close");
    }
    file.fd = -1;
    if (::rename(temporary.c_str(), path.c_str()) != 0) fail(errno, "rename to '" + path.string() + "' from");
    // Make the rename itself durable; failure here leaves a correct file, so it is not an error.
    FileDescriptor dir{::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
    if (dir.fd >= 0) ::fsync(dir.fd);
}

std::string read_file_bounded(const std::filesystem::path& path, std::uint64_t max_size) {
    FileDescriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
    if (file.fd < 0) throw_errno(errno, "open", path);
    struct stat info {};
    if (::fstat(file.fd, &info) != 0) throw_errno(errno, "fstat", path);
    if (!S_ISREG(info.st_mode)) throw_errno(EINVAL, "not a regular file:", path);
    if (static_cast<std::uint64_t>(info.st_size) > max_size) {
        throw std::length_error("'" + path.string() + "' is " + std::to_string(info.st_size) +
                                " bytes, more than the limit of " + std::to_string(max_size));
    }
    std::string contents(static_cast<std::size_t>(info.st_size), '\0');
    std::size_t done = 0;
    while (done < contents.size()) {
        ssize_t got = ::read(file.fd, contents.data() + done, contents.size() - done);
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

}  // namespace cudacore::detail
