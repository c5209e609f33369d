#include "fake_redis_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace cudacore::test {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
constexpr std::chrono::milliseconds tick{20};  // how often a waiting thread looks at stopping_

int loopback_socket(int port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    if (port == 0) {
        if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
            ::listen(fd, 64) != 0) {
            const int error = errno;
            ::close(fd);
            throw std::runtime_error(std::string("bind/listen on 127.0.0.1: ") + std::strerror(error));
        }
    } else if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

}  // namespace

FakeRedisServer::FakeRedisServer(Script script) : script_(std::move(script)) {
    listener_ = loopback_socket(0);
    sockaddr_in address{};
    socklen_t length = sizeof address;
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
}

FakeRedisServer::~FakeRedisServer() {
    stopping_ = true;
    acceptor_.join();
    std::vector<std::thread> threads;
    {
        std::lock_guard lock(mutex_);
        threads.swap(threads_);
    }
    for (std::thread& thread : threads) thread.join();
    ::close(listener_);
}

std::string FakeRedisServer::url(const std::string& query, bool tls) const {
    std::string url = std::string(tls ? "rediss" : "redis") + "://127.0.0.1:" + std::to_string(port_) + "/0";
    return query.empty() ? url : url + "?" + query;
}

void FakeRedisServer::accept_loop() {
    while (!stopping_) {
        pollfd waiting{listener_, POLLIN, 0};
        if (::poll(&waiting, 1, static_cast<int>(tick.count())) <= 0) continue;
        const int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
        if (client < 0) continue;
        ++connections_;
        std::lock_guard lock(mutex_);
        threads_.emplace_back([this, client] {
            serve(client);
            ::close(client);
        });
    }
}

bool FakeRedisServer::receive(int fd, std::string& into, std::chrono::milliseconds wait) {
    const Clock::time_point until = Clock::now() + wait;
    while (!stopping_) {
        pollfd waiting{fd, POLLIN, 0};
        const int ready = ::poll(&waiting, 1, static_cast<int>(tick.count()));
        if (ready > 0) {
            char buffer[65536];
            const ssize_t got = ::recv(fd, buffer, sizeof buffer, 0);
            if (got <= 0) return false;  // closed or reset: nothing more will come
            into.append(buffer, static_cast<std::size_t>(got));
            return true;
        }
        if (Clock::now() >= until) return true;
    }
    return false;
}

bool FakeRedisServer::send_all(int client, std::string_view bytes) {
    while (!bytes.empty()) {
        if (stopping_) return false;
        pollfd waiting{client, POLLOUT, 0};
        if (::poll(&waiting, 1, static_cast<int>(tick.count())) <= 0) continue;
        const ssize_t sent = ::send(client, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (sent < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
            return false;
        }
        bytes_sent_ += static_cast<std::uint64_t>(sent);
        bytes.remove_prefix(static_cast<std::size_t>(sent));
    }
    return true;
}

void FakeRedisServer::serve(int client) {
    auto pause = [&](std::chrono::milliseconds interval) {
        const Clock::time_point until = Clock::now() + interval;
        while (!stopping_ && Clock::now() < until)
            std::this_thread::sleep_for(std::min<Clock::duration>(tick, until - Clock::now()));
    };
    if (script_.behaviour == Behaviour::proxy) {
        const int upstream = loopback_socket(script_.target_port);
        if (upstream < 0) return;
        std::string pending;  // the target's bytes not yet passed on
        Clock::time_point next_byte = Clock::now();
        while (!stopping_) {
            auto wait = tick;
            if (!pending.empty())
                wait = std::clamp(std::chrono::duration_cast<std::chrono::milliseconds>(
                                      next_byte - Clock::now()),
                                  0ms, tick);
            pollfd waiting[2] = {{client, POLLIN, 0}, {upstream, POLLIN, 0}};
            ::poll(waiting, 2, static_cast<int>(wait.count()));
            if (waiting[0].revents != 0) {
                std::string request;
                if (!receive(client, request, 0ms) || !send_all(upstream, request)) break;
            }
            if (waiting[1].revents != 0 && !receive(upstream, pending, 0ms) && pending.empty()) break;
            if (!pending.empty() && Clock::now() >= next_byte) {
                // One byte per interval; with no interval, all of it (a fast path).
                const std::size_t count = script_.interval.count() == 0 ? pending.size() : 1;
                if (!send_all(client, std::string_view(pending).substr(0, count))) break;
                pending.erase(0, count);
                next_byte = Clock::now() + script_.interval;
            }
        }
        ::close(upstream);
        return;
    }
    for (;;) {
        std::string request;
        while (request.empty()) {  // a command (or part of one) arrived
            if (!receive(client, request, tick)) return;
        }
        switch (script_.behaviour) {
            case Behaviour::stall:
                break;
            case Behaviour::trickle:
                for (char byte : script_.reply) {
                    if (!send_all(client, std::string_view(&byte, 1))) return;
                    pause(script_.interval);
                }
                break;
            case Behaviour::reset: {
                send_all(client, std::string_view(script_.reply).substr(0, script_.reply.size() / 2));
                pause(script_.interval);
                const linger abort{1, 0};  // close() then sends RST instead of FIN
                ::setsockopt(client, SOL_SOCKET, SO_LINGER, &abort, sizeof abort);
                return;
            }
            case Behaviour::junk:
                if (!send_all(client, script_.reply)) return;
                break;
            case Behaviour::endless: {
                const int small = 64 << 10;  // bytes_sent() then tells closely what the client took
                ::setsockopt(client, SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
                if (!send_all(client, script_.reply)) return;
                while (send_all(client, script_.filler)) {
                }
                return;
            }
            case Behaviour::proxy:
                return;
        }
    }
}

}  // namespace cudacore::test
