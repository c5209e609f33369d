#include "support/child_process.hpp"

#include "cudacore/errors.hpp"
#include "support/parent_death.hpp"
#include "support/system_call_error.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>
#include <utility>

extern char** environ;

namespace cudacore::detail {

namespace {

// Closes a descriptor on scope exit.
struct Descriptor {
    int fd = -1;
    Descriptor() = default;
    explicit Descriptor(int value) : fd(value) {}
    Descriptor(Descriptor&& other) noexcept : fd(std::exchange(other.fd, -1)) {}
    Descriptor& operator=(Descriptor&& other) noexcept {
        if (this != &other) {
            reset();
            fd = std::exchange(other.fd, -1);
        }
        return *this;
    }
    ~Descriptor() { reset(); }
    void reset() noexcept {
        if (fd >= 0) ::close(fd);
        fd = -1;
    }
};

[[noreturn]] void fail(const std::string& call, const std::filesystem::path& program) {
    throw ChildStartError(errno, call, program);
}

// Moves `fd` to a number above the standard ones and 3, so that the child's dup2 onto 0..3
// never lands on a descriptor that is itself one of its sources (dup2 of a descriptor onto
// itself keeps close-on-exec).
int above_standard(int fd, const std::filesystem::path& program) {
    if (fd < 0) fail("pipe", program);
    const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 10);
    const int error = errno;
    ::close(fd);
    errno = error;
    if (moved < 0) fail("fcntl(F_DUPFD_CLOEXEC)", program);
    return moved;
}

struct Channel {
    Descriptor read, write;
};

Channel make_pipe(const std::filesystem::path& program) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) fail("pipe2", program);
    Channel channel;
    channel.read.fd = above_standard(fds[0], program);
    channel.write.fd = above_standard(fds[1], program);
    return channel;
}


}  // namespace

ChildStartError::ChildStartError(int error, std::string call, const std::filesystem::path& program)
    : std::system_error(error, std::generic_category(), call),
      call_(std::move(call)),
      message_("'") {
    // Appended piece by piece: GCC 12 warns (-Wrestrict, wrongly) on the chained operator+.
    message_ += program.string();
    message_ += "' could not be started: ";
    message_ += system_call_failure(call_, error);
}

void init_default_signal_attributes(posix_spawnattr_t& attributes) noexcept {
    posix_spawnattr_init(&attributes);
    sigset_t defaults, empty;
    sigfillset(&defaults);
    sigemptyset(&empty);
    posix_spawnattr_setsigdefault(&attributes, &defaults);
    posix_spawnattr_setsigmask(&attributes, &empty);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
}

std::vector<std::string> helper_environment() {
    const std::string prefix = std::string(kParentPidVariable) + "=";
    std::vector<std::string> variables;
    for (char** entry = environ; entry && *entry; ++entry)
        if (!std::string_view(*entry).starts_with(prefix)) variables.emplace_back(*entry);
    variables.push_back(prefix + std::to_string(::getpid()));
    return variables;
}

std::string ChildProcessResult::how_it_ended() const {
    if (timed_out) return "timed out after " + std::to_string(timeout.count()) + " ms";
    if (signal != 0) {
        const char* name = ::strsignal(signal);
        return "killed by signal " + std::to_string(signal) + " (" + (name ? name : "unknown") + ")";
    }
    return "exited with status " + std::to_string(exit_code);
}

ChildProcessResult run_child_process(const std::filesystem::path& program,
                                     const std::vector<std::string>& args,
                                     const ChildProcessOptions& options) {
    // Standard input is a socket: the parent's sends use MSG_NOSIGNAL, so a child that dies
    // before reading everything gives EPIPE here, never a SIGPIPE to the calling process.
    int sockets[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) fail("socketpair", program);
    Descriptor input_parent{above_standard(sockets[0], program)};
    Descriptor input_child{above_standard(sockets[1], program)};
    Channel out = make_pipe(program);
    Channel err = make_pipe(program);
    Channel reply;
    if (options.reply_channel) reply = make_pipe(program);

    std::vector<std::string> argv_strings{program.string()};
    argv_strings.insert(argv_strings.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& arg : argv_strings) argv.push_back(arg.data());
    argv.push_back(nullptr);
    std::vector<std::string> environment_strings = helper_environment();
    std::vector<char*> environment;
    for (auto& variable : environment_strings) environment.push_back(variable.data());
    environment.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, input_child.fd, 0);
    posix_spawn_file_actions_adddup2(&actions, out.write.fd, 1);
    posix_spawn_file_actions_adddup2(&actions, err.write.fd, 2);
    if (options.reply_channel) posix_spawn_file_actions_adddup2(&actions, reply.write.fd, 3);
    // The child starts with default signal handling, whatever the caller set (an ignored
    // SIGSEGV would otherwise be inherited, and a crash would hang).
    posix_spawnattr_t attributes;
    init_default_signal_attributes(attributes);
    pid_t pid = 0;
    const int spawned = ::posix_spawn(&pid, program.c_str(), &actions, &attributes, argv.data(), environment.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    input_child.reset();
    out.write.reset();
    err.write.reset();
    reply.write.reset();
    if (spawned != 0) {
        errno = spawned;
        fail("posix_spawn", program);
    }

    ChildProcessResult result;
    result.timeout = options.timeout;
    const bool limited = options.timeout.count() > 0;
    const auto deadline = std::chrono::steady_clock::now() + options.timeout;
    auto remaining_ms = [&]() -> int {
        if (!limited) return -1;
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        return static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, 1 << 30));
    };

    std::string_view pending = options.input;
    if (pending.empty()) input_parent.reset();
    struct Reader {
        Descriptor* fd;
        std::string* text;
        std::size_t limit;
    };
    std::vector<Reader> readers{{&out.read, &result.out, options.max_output},
                                {&err.read, &result.err, options.max_output}};
    if (options.reply_channel) readers.push_back({&reply.read, &result.reply, std::string::npos});

    for (;;) {
        std::vector<pollfd> polled;
        for (const auto& reader : readers)
            if (reader.fd->fd >= 0) polled.push_back({reader.fd->fd, POLLIN, 0});
        if (input_parent.fd >= 0) polled.push_back({input_parent.fd, POLLOUT, 0});
        if (polled.empty()) break;
        const int timeout_ms = remaining_ms();
        if (limited && timeout_ms == 0) {
            result.timed_out = true;
            break;
        }
        const int ready = ::poll(polled.data(), polled.size(), timeout_ms);
        if (ready < 0 && errno == EINTR) continue;
        if (ready < 0) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
            fail("poll", program);
        }
        if (ready == 0) continue;  // the deadline is checked above
        for (const pollfd& p : polled) {
            if (p.revents == 0) continue;
            if (p.fd == input_parent.fd) {
                const ssize_t sent = ::send(p.fd, pending.data(), std::min<std::size_t>(pending.size(), 1 << 16),
                                            MSG_NOSIGNAL | MSG_DONTWAIT);
                if (sent < 0 && (errno == EINTR || errno == EAGAIN)) continue;
                if (sent <= 0) {  // the child closed its input (or died): stop feeding it
                    input_parent.reset();
                    continue;
                }
                pending.remove_prefix(static_cast<std::size_t>(sent));
                if (pending.empty()) input_parent.reset();
                continue;
            }
            for (auto& reader : readers) {
                if (reader.fd->fd != p.fd) continue;
                char buffer[1 << 16];
                const ssize_t got = ::read(p.fd, buffer, sizeof buffer);
                if (got < 0 && (errno == EINTR || errno == EAGAIN)) break;
                if (got <= 0) {
                    reader.fd->reset();
                    break;
                }
                const std::size_t room = reader.limit - std::min(reader.limit, reader.text->size());
                reader.text->append(buffer, std::min(room, static_cast<std::size_t>(got)));
                break;
            }
        }
    }
    input_parent.reset();

    // Output closed: the child is ending (or timed out). Wait for it until the deadline.
    int status = 0;
    for (;;) {
        if (result.timed_out) {
            ::kill(pid, SIGKILL);
            while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
            break;
        }
        const pid_t done = ::waitpid(pid, &status, limited ? WNOHANG : 0);
        if (done == pid) break;
        if (done < 0 && errno != EINTR) break;
        if (done == 0) {
            if (remaining_ms() == 0) result.timed_out = true;
            else ::usleep(1000);
        }
    }
    if (!result.timed_out) {
        if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
        else if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
    }
    return result;
}

std::filesystem::path find_helper_program(const std::string& name, const char* env_var,
                                          const std::filesystem::path& chosen) {
    if (!chosen.empty()) return chosen;
    if (const char* env = std::getenv(env_var); env && *env) return env;
    std::vector<std::string> searched;
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void*>(&find_helper_program), &info) && info.dli_fname) {
        const auto dir = std::filesystem::path(info.dli_fname).parent_path();
        for (const auto& candidate : {dir / name, dir / ".." / "libexec" / "cudacore" / name}) {
            if (::access(candidate.c_str(), X_OK) == 0) return candidate;
            searched.push_back(candidate.string());
        }
    }
    throw LoaderError(name, searched, env_var, "the helper program was not found");
}

}  // namespace cudacore::detail
