/// @file
/// IpcChannel: a Unix-domain socket between two processes carrying messages (bytes, boundaries
/// kept) each with optionally one file descriptor: how a pool's handle travels (ipc.hpp).
///
///     // process A                                  // process B
///     IpcListener listener(path);                   IpcChannel channel = IpcChannel::connect(path);
///     IpcChannel channel = listener.accept();       IpcMessage m = channel.receive();
///     channel.send(bytes, fd);                      // m.bytes, m.fd (owned, closed with m)
///     channel.send("ready");                        channel.receive().text() == "ready"
#pragma once

#include "cudacore/errors.hpp"

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace cudacore {

/// A socket or file-descriptor operation failed, or the peer went away.
class IpcError : public Error {
public:
    /// Makes the error with its message (what()).
    using Error::Error;
};

/// An owned file descriptor, closed when destroyed (move-only).
class FileDescriptor {
public:
    FileDescriptor() noexcept = default;
    /// Takes ownership of `fd` (-1 for none).
    explicit FileDescriptor(int fd) noexcept : fd_(fd) {}
    /// Takes `other`'s descriptor.
    FileDescriptor(FileDescriptor&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
    /// Closes this object's descriptor, then takes `other`'s.
    FileDescriptor& operator=(FileDescriptor&& other) noexcept;
    FileDescriptor(const FileDescriptor&) = delete;
    FileDescriptor& operator=(const FileDescriptor&) = delete;
    ~FileDescriptor();

    int get() const noexcept { return fd_; }  ///< the descriptor (-1 for none), still owned
    bool valid() const noexcept { return fd_ >= 0; }  ///< it holds a descriptor
    int release() noexcept { return std::exchange(fd_, -1); }  ///< gives up ownership to the caller
    void reset() noexcept;  ///< closes the descriptor now (errors ignored)

private:
    int fd_ = -1;
};

/// A message received on an IpcChannel: bytes and the file descriptor that came with them.
struct IpcMessage {
    std::vector<std::byte> bytes{};  ///< the message's bytes, as sent (1 to max_message_size)
    FileDescriptor fd{};  ///< invalid when the message carried none

    /// The bytes as characters.
    std::string text() const {
        return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
    }
};

/// A Unix-domain socket connection between two processes, carrying bytes and file descriptors.
/// Move-only; one thread at a time; IpcError on failure, never SIGPIPE.
class IpcChannel {
public:
    /// Largest message send() accepts and receive() reads, in bytes.
    static constexpr std::size_t max_message_size = 64 * 1024;

    /// Two connected ends in this process (socketpair).
    static std::pair<IpcChannel, IpcChannel> pair();
    /// Connects to an IpcListener at `path`, retrying until `timeout` has passed.
    static IpcChannel connect(const std::filesystem::path& path,
                              std::chrono::milliseconds timeout = std::chrono::seconds(10));
    /// Takes over a connected SOCK_SEQPACKET Unix socket.
    static IpcChannel adopt(FileDescriptor socket, std::string peer = "inherited socket");

    /// Takes over `other`'s socket; the moved-from channel throws IpcError.
    IpcChannel(IpcChannel&&) noexcept = default;
    /// Closes this channel's socket and takes over the other's.
    IpcChannel& operator=(IpcChannel&&) noexcept = default;

    /// Sends `bytes` (1 to max_message_size) and, when fd >= 0, a duplicate of `fd`.
    void send(std::span<const std::byte> bytes, int fd = -1) const;
    /// Sends the characters of `text`, as the send above.
    void send(const std::string& text, int fd = -1) const;
    /// The next message, waiting at most `timeout` when one is given.
    IpcMessage receive(std::optional<std::chrono::milliseconds> timeout = std::nullopt) const;

    /// The socket's descriptor (-1 when moved from).
    int native_handle() const noexcept { return socket_.get(); }
    /// What the channel is connected to: "IPC socket PATH", "socket pair", or adopt()'s name.
    const std::string& peer() const noexcept { return peer_; }

private:
    IpcChannel(FileDescriptor socket, std::string peer)
        : socket_(std::move(socket)), peer_(std::move(peer)) {}
    FileDescriptor socket_;
    std::string peer_;
};

/// A listening Unix-domain socket at a path; the path is removed when the listener goes.
class IpcListener {
public:
    /// IpcError when the path is too long, exists, or cannot be bound.
    explicit IpcListener(std::filesystem::path path);
    ~IpcListener();
    IpcListener(IpcListener&&) noexcept = default;  ///< takes over `other`'s socket and path
    /// Closes this listener, removes its path, and takes over the other's.
    IpcListener& operator=(IpcListener&& other) noexcept;

    /// The next connection; waits at most `timeout` when one is given.
    IpcChannel accept(std::optional<std::chrono::milliseconds> timeout = std::nullopt) const;
    const std::filesystem::path& path() const noexcept { return path_; }  ///< the socket's path

private:
    FileDescriptor socket_;
    std::filesystem::path path_;
};

}  // namespace cudacore
