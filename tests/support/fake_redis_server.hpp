// A misbehaving Redis server for the remote cache's tests: a TCP listener on a free loopback port,
// served by threads of this process, that answers every command the way one broken server or
// path would (a real redis-server cannot be made to do these). Stopped, and its threads joined,
// by the destructor.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace cudacore::test {

class FakeRedisServer {
public:
    enum class Behaviour {
        stall,    // accepts, reads what comes, never answers
        trickle,  // answers each command with `reply`, one byte per `interval`
        reset,    // sends the first half of `reply`, then resets the connection (RST)
        junk,     // answers with `reply` (meant to be bytes that are not Redis's protocol)
        endless,  // sends `reply`, then `filler` over and over as fast as the client takes it, until it closes
        proxy,    // forwards to 127.0.0.1:`target_port`; the target's bytes go back one per `interval`
    };

    struct Script {
        Behaviour behaviour = Behaviour::stall;
        std::string reply;  // what each command is answered with (not for stall and proxy)
        std::chrono::milliseconds interval{50};
        int target_port = 0;  // proxy
        std::string filler = std::string(64 << 10, 'x');  // endless
    };

    explicit FakeRedisServer(Script script);
    ~FakeRedisServer();
    FakeRedisServer(const FakeRedisServer&) = delete;
    FakeRedisServer& operator=(const FakeRedisServer&) = delete;

    int port() const { return port_; }
    // redis://127.0.0.1:port/0 (rediss:// with `tls`), with `query` after '?' when not empty.
    std::string url(const std::string& query = "", bool tls = false) const;
    // Connections accepted, and bytes sent to clients, so far.
    std::uint64_t connections() const { return connections_; }
    std::uint64_t bytes_sent() const { return bytes_sent_; }

private:
    void accept_loop();
    void serve(int client);
    // Sends `bytes` whole (false when the client went or the server stops).
    bool send_all(int client, std::string_view bytes);
    // Waits until `fd` is readable (or the server stops); reads what is there into `into`.
    bool receive(int fd, std::string& into, std::chrono::milliseconds wait);

    Script script_;
    int listener_ = -1;
    int port_ = 0;
    std::atomic<bool> stopping_{false};
    std::atomic<std::uint64_t> connections_{0}, bytes_sent_{0};
    std::mutex mutex_;
    std::vector<std::thread> threads_;  // with mutex_ held
    std::thread acceptor_;
};

}  // namespace cudacore::test
