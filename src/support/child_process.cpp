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
#include <chrono>
#include <optional>
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

// The child's standard input (a socket: the parent's sends use MSG_NOSIGNAL, so a child that dies
// before reading everything gives EPIPE here, never a SIGPIPE to the calling process), its
// standard output and error, and its reply channel (reply_channel only).
struct ChildChannels {
    Descriptor input_parent, input_child;
    Channel out, err, reply;
};

ChildChannels open_child_channels(const std::filesystem::path& program, bool reply_channel) {
    int sockets[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) fail("socketpair", program);
    ChildChannels channels;
    channels.input_parent.fd = above_standard(sockets[0], program);
    channels.input_child.fd = above_standard(sockets[1], program);
    channels.out = make_pipe(program);
    channels.err = make_pipe(program);
    if (reply_channel) channels.reply = make_pipe(program);
    return channels;
}

// Starts the child on the channels' child ends (closed here once it runs, or failed to).
pid_t spawn_child(const std::filesystem::path& program, const std::vector<std::string>& args,
                  ChildChannels& channels, bool reply_channel) {
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
    posix_spawn_file_actions_adddup2(&actions, channels.input_child.fd, 0);
    posix_spawn_file_actions_adddup2(&actions, channels.out.write.fd, 1);
    posix_spawn_file_actions_adddup2(&actions, channels.err.write.fd, 2);
    if (reply_channel) posix_spawn_file_actions_adddup2(&actions, channels.reply.write.fd, 3);
    // The child starts with default signal handling, whatever the caller set (an ignored
    // SIGSEGV would otherwise be inherited, and a crash would hang).
    posix_spawnattr_t attributes;
    init_default_signal_attributes(attributes);
    pid_t pid = 0;
    const int spawned = ::posix_spawn(&pid, program.c_str(), &actions, &attributes, argv.data(), environment.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    channels.input_child.reset();
    channels.out.write.reset();
    channels.err.write.reset();
    channels.reply.write.reset();
    if (spawned != 0) {
        errno = spawned;
        fail("posix_spawn", program);
    }
    return pid;
}

// Milliseconds left before the time limit, for poll: -1 without a limit, else 0 or more.
struct ChildDeadline {
    bool limited;
    std::chrono::steady_clock::time_point at;

    explicit ChildDeadline(std::chrono::milliseconds timeout)
        : limited(timeout.count() > 0), at(std::chrono::steady_clock::now() + timeout) {}
    int remaining_ms() const {
        if (!limited) return -1;
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(at - std::chrono::steady_clock::now());
        return static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, 1 << 30));
    }
};

// One of the child's outputs, kept up to `limit` bytes (the rest read and dropped).
struct OutputReader {
    Descriptor* fd;
    std::string* text;
    std::size_t limit;
};

// Sends the next piece of `pending` to the child's input; closes it when all is sent or the
// child closed its end (or died).
void feed_input(Descriptor& input, std::string_view& pending) {
    const ssize_t sent = ::send(input.fd, pending.data(), std::min<std::size_t>(pending.size(), 1 << 16),
                                MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (sent <= 0) {  // the child closed its input (or died): stop feeding it
        input.reset();
        return;
    }
    pending.remove_prefix(static_cast<std::size_t>(sent));
    if (pending.empty()) input.reset();
}

// How long outputs are read after the child exited: what a descendant still holds open is not
// waited for beyond that.
constexpr std::chrono::milliseconds kDrainAfterExit{1000};

// Reads what the child wrote on one output; closes it at its end.
void read_output(OutputReader& reader) {
    char buffer[1 << 16];
    const ssize_t got = ::read(reader.fd->fd, buffer, sizeof buffer);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (got <= 0) {
        reader.fd->reset();
        return;
    }
    const std::size_t room = reader.limit - std::min(reader.limit, reader.text->size());
    reader.text->append(buffer, std::min(room, static_cast<std::size_t>(got)));
}

// Whether the reply passed its bound: then it is dropped (it is no reply) and the child is to be
// killed (result.reply_too_long).
bool reply_too_long(const ChildProcessOptions& options, ChildProcessResult& result) {
    if (!options.reply_channel || result.reply.size() <= options.max_reply) return false;
    result.reply_too_long = true;
    result.max_reply = options.max_reply;
    std::string().swap(result.reply);
    return true;
}

// How the child ended, from waitpid's `status`, in `result`.
void record_end(int status, ChildProcessResult& result) {
    if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
    else if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
}

// Whether the child has exited (reaped now, its status in `result`); once it has, true.
bool child_exited(pid_t pid, bool& reaped, ChildProcessResult& result) {
    if (reaped) return true;
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) != pid) return false;
    reaped = true;
    record_end(status, result);
    return true;
}

// Feeds the child its input and collects its outputs until they all close, the deadline passes
// (result.timed_out), or kDrainAfterExit after the child exited; `reaped`: the child exited and
// was waited for here.
void exchange_with_child(pid_t pid, const std::filesystem::path& program, ChildChannels& channels,
                         const ChildProcessOptions& options, const ChildDeadline& deadline,
                         ChildProcessResult& result, bool& reaped) {
    std::string_view pending = options.input;
    if (pending.empty()) channels.input_parent.reset();
    std::vector<OutputReader> readers{{&channels.out.read, &result.out, options.max_output},
                                      {&channels.err.read, &result.err, options.max_output}};
    // One byte past the bound is kept: a reply that long is refused, never cut short unseen.
    if (options.reply_channel)
        readers.push_back({&channels.reply.read, &result.reply, options.max_reply + (options.max_reply != std::string::npos)});
    std::optional<std::chrono::steady_clock::time_point> drained_by;
    for (;;) {
        std::vector<pollfd> polled;
        for (const auto& reader : readers)
            if (reader.fd->fd >= 0) polled.push_back({reader.fd->fd, POLLIN, 0});
        if (channels.input_parent.fd >= 0) polled.push_back({channels.input_parent.fd, POLLOUT, 0});
        if (polled.empty()) break;
        int timeout_ms = deadline.remaining_ms();
        if (deadline.limited && timeout_ms == 0) {
            result.timed_out = true;
            break;
        }
        if (options.stop_requested) {
            if (options.stop_requested()) {
                result.timed_out = result.stopped = true;
                break;
            }
            timeout_ms = timeout_ms < 0 ? 10 : std::min(timeout_ms, 10);
        }
        if (reply_too_long(options, result)) break;
        // The child is looked at every 50 ms: once it has exited, its outputs get a last second.
        if (!drained_by && child_exited(pid, reaped, result))
            drained_by = std::chrono::steady_clock::now() + kDrainAfterExit;
        if (drained_by && std::chrono::steady_clock::now() >= *drained_by) break;
        timeout_ms = timeout_ms < 0 ? 50 : std::min(timeout_ms, 50);
        const int ready = ::poll(polled.data(), polled.size(), timeout_ms);
        if (ready < 0 && errno == EINTR) continue;
        if (ready < 0) {
            if (!reaped) {
                ::kill(pid, SIGKILL);
                ::waitpid(pid, nullptr, 0);
            }
            fail("poll", program);
        }
        if (ready == 0) continue;  // the deadline is checked above
        for (const pollfd& p : polled) {
            if (p.revents == 0) continue;
            if (p.fd == channels.input_parent.fd) {
                feed_input(channels.input_parent, pending);
                continue;
            }
            auto reader = std::find_if(readers.begin(), readers.end(),
                                       [&](const OutputReader& r) { return r.fd->fd == p.fd; });
            if (reader != readers.end()) read_output(*reader);
        }
    }
    channels.input_parent.reset();
}

// Output closed: the child is ending (or timed out). Waits for it until the deadline, and
// records how it ended.
void wait_for_child(pid_t pid, const ChildDeadline& deadline, ChildProcessResult& result, bool reaped) {
    if (reaped) return;  // exited, and its status taken, while its outputs were read
    int status = 0;
    const bool kill = result.timed_out || result.reply_too_long;
    for (;;) {
        if (kill) {
            ::kill(pid, SIGKILL);
            while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
            break;
        }
        const pid_t done = ::waitpid(pid, &status, deadline.limited ? WNOHANG : 0);
        if (done == pid) break;
        if (done < 0 && errno != EINTR) break;
        if (done == 0) {
            if (deadline.remaining_ms() == 0) result.timed_out = true;
            else ::usleep(1000);
        }
    }
    if (!kill) record_end(status, result);
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
    if (stopped) return "stopped by its caller";
    if (reply_too_long) return "killed: its reply passed " + std::to_string(max_reply) + " bytes";
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
    ChildChannels channels = open_child_channels(program, options.reply_channel);
    const pid_t pid = spawn_child(program, args, channels, options.reply_channel);
    ChildProcessResult result;
    result.timeout = options.timeout;
    const ChildDeadline deadline(options.timeout);
    bool reaped = false;
    exchange_with_child(pid, program, channels, options, deadline, result, reaped);
    wait_for_child(pid, deadline, result, reaped);
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
