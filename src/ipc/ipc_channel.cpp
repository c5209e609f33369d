// Unix-domain SOCK_SEQPACKET sockets carrying messages and file descriptors (SCM_RIGHTS).
#include "cudacore/ipc_channel.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace cudacore {

namespace {

[[noreturn]] void fail(const char* call, int error, const std::string& object) {
    throw IpcError(std::string(call) + " failed: " + std::strerror(error) + " (errno " +
                   std::to_string(error) + ") for " + object);
}

sockaddr_un address_of(const std::filesystem::path& path) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    const std::string text = path.string();
    if (text.empty() || text.size() >= sizeof address.sun_path)
        throw IpcError("IPC socket path '" + text + "' is empty or longer than " +
                       std::to_string(sizeof address.sun_path - 1) + " bytes");
    std::memcpy(address.sun_path, text.c_str(), text.size() + 1);
    return address;
}

FileDescriptor new_socket(const std::string& object) {
    const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0) fail("socket", errno, object);
    return FileDescriptor(fd);
}

// Waits until `fd` is readable; false when `timeout` passed first.
bool wait_readable(int fd, std::optional<std::chrono::milliseconds> timeout,
                   const std::string& object) {
    pollfd entry{fd, POLLIN, 0};
    const int ms = timeout ? static_cast<int>(timeout->count()) : -1;
    for (;;) {
        const int ready = ::poll(&entry, 1, ms);
        if (ready > 0) return true;
        if (ready == 0) return false;
        if (errno != EINTR) fail("poll", errno, object);
    }
}

}  // namespace

FileDescriptor& FileDescriptor::operator=(FileDescriptor&& other) noexcept {
    if (this != &other) {
        reset();
        fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
}

FileDescriptor::~FileDescriptor() { reset(); }

void FileDescriptor::reset() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
}

std::pair<IpcChannel, IpcChannel> IpcChannel::pair() {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0)
        fail("socketpair", errno, "an IPC channel pair");
    return {IpcChannel(FileDescriptor(fds[0]), "socket pair"),
            IpcChannel(FileDescriptor(fds[1]), "socket pair")};
}

IpcChannel IpcChannel::connect(const std::filesystem::path& path,
                               std::chrono::milliseconds timeout) {
    const std::string object = "IPC socket " + path.string();
    const sockaddr_un address = address_of(path);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        FileDescriptor socket = new_socket(object);
        if (::connect(socket.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) ==
            0)
            return IpcChannel(std::move(socket), object);
        const int error = errno;
        // Not listening yet: try again until the deadline.
        const bool not_yet = error == ENOENT || error == ECONNREFUSED || error == EAGAIN;
        if (!not_yet || std::chrono::steady_clock::now() >= deadline)
            fail("connect", error,
                 object + (not_yet ? " (no listener within " + std::to_string(timeout.count()) +
                                         " ms)"
                                   : std::string()));
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

IpcChannel IpcChannel::adopt(FileDescriptor socket, std::string peer) {
    if (!socket.valid()) throw IpcError("IpcChannel::adopt: invalid file descriptor (" + peer + ")");
    return IpcChannel(std::move(socket), std::move(peer));
}

void IpcChannel::send(std::span<const std::byte> bytes, int fd) const {
    if (bytes.size() > max_message_size)
        throw IpcError("IpcChannel::send: message of " + std::to_string(bytes.size()) +
                       " bytes exceeds " + std::to_string(max_message_size) + " (" + peer_ + ")");
    if (!socket_.valid()) throw IpcError("IpcChannel::send: the channel was moved from");
    // A zero-length datagram would read as end-of-stream on the other side.
    if (bytes.empty()) throw InvalidArgumentError("IpcChannel::send: empty message (" + peer_ + ")");
    iovec data{const_cast<std::byte*>(bytes.data()), bytes.size()};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr message{};
    message.msg_iov = &data;
    message.msg_iovlen = 1;
    if (fd >= 0) {
        message.msg_control = control;
        message.msg_controllen = sizeof control;
        cmsghdr* header = CMSG_FIRSTHDR(&message);
        header->cmsg_level = SOL_SOCKET;
        header->cmsg_type = SCM_RIGHTS;
        header->cmsg_len = CMSG_LEN(sizeof(int));
        std::memcpy(CMSG_DATA(header), &fd, sizeof(int));
    }
    for (;;) {
        // MSG_NOSIGNAL: a peer that went away is an error, not SIGPIPE.
        if (::sendmsg(socket_.get(), &message, MSG_NOSIGNAL) >= 0) return;
        if (errno == EINTR) continue;
        const int error = errno;
        fail("sendmsg", error,
             peer_ + (error == EPIPE || error == ECONNRESET ? " (the peer closed its end)" : ""));
    }
}

void IpcChannel::send(const std::string& text, int fd) const {
    send(std::as_bytes(std::span(text.data(), text.size())), fd);
}

IpcMessage IpcChannel::receive(std::optional<std::chrono::milliseconds> timeout) const {
    if (!socket_.valid()) throw IpcError("IpcChannel::receive: the channel was moved from");
    if (!wait_readable(socket_.get(), timeout, peer_))
        throw IpcError("IpcChannel::receive: no message within " +
                       std::to_string(timeout->count()) + " ms from " + peer_);
    IpcMessage out;
    out.bytes.resize(max_message_size);
    iovec data{out.bytes.data(), out.bytes.size()};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr message{};
    message.msg_iov = &data;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    ssize_t received;
    do {
        received = ::recvmsg(socket_.get(), &message, MSG_CMSG_CLOEXEC);
    } while (received < 0 && errno == EINTR);
    if (received < 0) {
        const int error = errno;
        fail("recvmsg", error,
             peer_ + (error == ECONNRESET ? " (the peer closed its end)" : ""));
    }
    // Take any descriptor first, so that it is closed whatever happens next.
    for (cmsghdr* header = CMSG_FIRSTHDR(&message); header; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
        const std::size_t count = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (std::size_t i = 0; i < count; ++i) {
            int fd;
            std::memcpy(&fd, CMSG_DATA(header) + i * sizeof(int), sizeof fd);
            if (!out.fd.valid()) out.fd = FileDescriptor(fd);
            else ::close(fd);  // one per message: extra ones are not leaked
        }
    }
    if (received == 0)
        throw IpcError("IpcChannel::receive: the peer closed its end (exited or was killed) "
                       "before sending a message (" + peer_ + ")");
    if (message.msg_flags & MSG_TRUNC)
        throw IpcError("IpcChannel::receive: message longer than " +
                       std::to_string(max_message_size) + " bytes (" + peer_ + ")");
    if (message.msg_flags & MSG_CTRUNC)
        throw IpcError("IpcChannel::receive: file descriptors were dropped (control data "
                       "truncated, or the process is out of descriptors) (" + peer_ + ")");
    out.bytes.resize(static_cast<std::size_t>(received));
    return out;
}

IpcListener::IpcListener(std::filesystem::path path) : path_(std::move(path)) {
    const std::string object = "IPC socket " + path_.string();
    const sockaddr_un address = address_of(path_);
    socket_ = new_socket(object);
    if (::bind(socket_.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
        const int error = errno;
        socket_.reset();  // the path is not ours: leave it
        fail("bind", error, object);
    }
    if (::listen(socket_.get(), 8) != 0) {
        const int error = errno;
        ::unlink(path_.c_str());
        socket_.reset();
        fail("listen", error, object);
    }
}

IpcListener::~IpcListener() {
    if (socket_.valid()) ::unlink(path_.c_str());
}

IpcListener& IpcListener::operator=(IpcListener&& other) noexcept {
    if (this != &other) {
        if (socket_.valid()) ::unlink(path_.c_str());  // as the destructor would
        socket_ = std::move(other.socket_);
        path_ = std::move(other.path_);
    }
    return *this;
}

IpcChannel IpcListener::accept(std::optional<std::chrono::milliseconds> timeout) const {
    const std::string object = "IPC socket " + path_.string();
    if (!socket_.valid()) throw IpcError("IpcListener::accept: the listener was moved from");
    if (!wait_readable(socket_.get(), timeout, object))
        throw IpcError("IpcListener::accept: no connection within " +
                       std::to_string(timeout->count()) + " ms on " + object);
    for (;;) {
        const int fd = ::accept4(socket_.get(), nullptr, nullptr, SOCK_CLOEXEC);
        if (fd >= 0) return IpcChannel::adopt(FileDescriptor(fd), object);
        if (errno != EINTR) fail("accept", errno, object);
    }
}

}  // namespace cudacore
