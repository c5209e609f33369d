// Checked loading: a probe load in a separate process (cudacore-load-probe), its verdict cached
// by the code's hash. See checked_load.hpp.
#include "cudacore/checked_load.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "code/code_validation.hpp"
#include "loader/driver_api.hpp"
#include "runtime/library_box.hpp"
#include "runtime/load_probe_cache.hpp"
#include "support/child_process.hpp"
#include "support/removed_on_signal.hpp"
#include "support/system_call_error.hpp"

#include <xxhash.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>

extern char** environ;

namespace cudacore {

namespace {

constexpr const char* kProbeName = "cudacore-load-probe";
constexpr const char* kProbeEnv = "CUDACORE_LOAD_PROBE";
constexpr std::size_t kMaxProbeOutput = 64 * 1024;

using VerdictKey = std::tuple<std::uint64_t, std::uint64_t, CodeType, int>;

struct VerdictCache {
    std::mutex mutex;
    std::map<VerdictKey, LoadProbeVerdict> verdicts;
};

VerdictCache& verdict_cache() {
    static auto* cache = new VerdictCache;  // never destroyed: usable from static destructors
    return *cache;
}

std::string describe(const ObjectCode& code) {
    std::string out(to_string(code.code_type()));
    if (!code.name().empty()) out += " '" + code.name() + "'";
    return out + " (" + std::to_string(code.size()) + " bytes)";
}

// The probe program: the option, the environment, beside the library, or in libexec.
std::filesystem::path find_probe(const LoadProbeOptions& options) {
    if (!options.probe_program.empty()) return options.probe_program;
    if (const char* env = std::getenv(kProbeEnv); env && *env) return env;
    std::vector<std::string> searched;
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&probe_load), &info) && info.dli_fname) {
        const auto dir = std::filesystem::path(info.dli_fname).parent_path();
        for (const auto& candidate : {dir / kProbeName, dir / ".." / "libexec" / "cudacore" / kProbeName}) {
            if (access(candidate.c_str(), X_OK) == 0) return candidate;
            searched.push_back(candidate.string());
        }
    }
    throw LoaderError(kProbeName, searched, kProbeEnv, "the load probe program was not found");
}

// A temporary file holding the code, removed when destroyed.
class CodeFile {
public:
    explicit CodeFile(std::string_view code) {
        path_ = (std::filesystem::temp_directory_path() / "cudacore-probe-XXXXXX").string();
        const int fd = mkstemp(path_.data());
        if (fd < 0) fail("create");
        for (std::size_t done = 0; done < code.size();) {
            const ssize_t n = write(fd, code.data() + done, code.size() - done);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                const int error = errno;
                close(fd);
                unlink(path_.c_str());
                errno = error;
                fail("write");
            }
            done += static_cast<std::size_t>(n);
        }
        if (close(fd) != 0) {
            unlink(path_.c_str());
            fail("close");
        }
        removed_on_signal_ = detail::RemovedOnSignal(path_);
    }
    ~CodeFile() { unlink(path_.c_str()); }
    CodeFile(const CodeFile&) = delete;
    CodeFile& operator=(const CodeFile&) = delete;
    const std::string& path() const { return path_; }

private:
    [[noreturn]] void fail(const char* what) {
        throw Error(std::string("probe_load: cannot ") + what + " the temporary file '" + path_ +
                    "': " + std::strerror(errno));
    }
    std::string path_;
    detail::RemovedOnSignal removed_on_signal_;
};

// Starts the probe on the file of code `file` (of `type`) for device `device`: its standard
// input /dev/null, its output and errors into one pipe. Returns its pid; `output` is the pipe's
// reading end.
pid_t spawn_probe(const std::string& program, const std::string& type, const std::string& file,
                  const std::string& device, int& output) {
    char* argv[] = {const_cast<char*>(program.c_str()), const_cast<char*>(type.c_str()),
                    const_cast<char*>(file.c_str()), const_cast<char*>(device.c_str()), nullptr};
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0)
        throw Error("probe_load: " + detail::system_call_failure("pipe2", errno));
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 2);
    // Default signal handling and CUDACORE_PARENT_PID, as run_child_process gives its children:
    // the probe dies with this process.
    posix_spawnattr_t attributes;
    detail::init_default_signal_attributes(attributes);
    std::vector<std::string> environment_strings = detail::helper_environment();
    std::vector<char*> environment;
    for (auto& variable : environment_strings) environment.push_back(variable.data());
    environment.push_back(nullptr);
    pid_t pid = 0;
    const int spawned = posix_spawn(&pid, program.c_str(), &actions, &attributes, argv, environment.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    close(pipe_fds[1]);
    if (spawned != 0) {
        close(pipe_fds[0]);
        if (spawned == ENOENT || spawned == EACCES || spawned == ENOEXEC || spawned == ENOTDIR)
            throw LoaderError(kProbeName, {program}, kProbeEnv,
                              std::string("cannot start the load probe: ") + std::strerror(spawned));
        throw Error("probe_load: the load probe '" + program + "' could not be started: " +
                    detail::system_call_failure("posix_spawn", spawned));
    }
    output = pipe_fds[0];
    return pid;
}

// Milliseconds left until `deadline`, 0 when it has passed.
int probe_ms_left(std::chrono::steady_clock::time_point deadline) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    return static_cast<int>(std::max<std::int64_t>(0, left.count()));
}

// The probe's output (up to kMaxProbeOutput bytes) until it closes it or the deadline passes
// (`timed_out`); closes `fd`.
std::string collect_probe_output(int fd, std::chrono::steady_clock::time_point deadline, bool& timed_out) {
    std::string output;
    for (;;) {
        pollfd readable{fd, POLLIN, 0};
        const int ready = poll(&readable, 1, probe_ms_left(deadline));
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) {
            timed_out = true;
            break;
        }
        char buffer[4096];
        const ssize_t n = read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        if (output.size() < kMaxProbeOutput) output.append(buffer, static_cast<std::size_t>(n));
    }
    close(fd);
    return output;
}

// Waits for the probe until the deadline (killed after it, or when `timed_out` already);
// returns its wait status.
int wait_for_probe(pid_t pid, std::chrono::steady_clock::time_point deadline, bool& timed_out) {
    int status = 0;
    while (!timed_out) {
        const pid_t done = waitpid(pid, &status, WNOHANG);
        if (done == pid) break;
        if (done < 0 && errno != EINTR) break;
        if (probe_ms_left(deadline) == 0) timed_out = true;
        else std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (timed_out) {
        kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
    }
    return status;
}

// Runs the probe on the code, waiting at most `timeout`.
LoadProbeVerdict run_probe(const std::filesystem::path& probe, const ObjectCode& code, int ordinal,
                           std::chrono::milliseconds timeout) {
    const CodeFile file(code.code());
    int output_fd = -1;
    const pid_t pid = spawn_probe(probe.string(), std::string(to_string(code.code_type())), file.path(),
                                  std::to_string(ordinal), output_fd);
    // Collect its output until it closes it or the time is up; then, closed but still running,
    // give it until the deadline to exit.
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    bool timed_out = false;
    std::string output = collect_probe_output(output_fd, deadline, timed_out);
    const int status = wait_for_probe(pid, deadline, timed_out);

    while (!output.empty() && (output.back() == '\n' || output.back() == '\r')) output.pop_back();
    LoadProbeVerdict verdict;
    if (timed_out) {
        verdict.crashed = true;
        verdict.detail = "timed out after " + std::to_string(timeout.count()) + " ms";
    } else if (WIFSIGNALED(status)) {
        verdict.crashed = true;
        verdict.detail = "killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
                         strsignal(WTERMSIG(status)) + ")";
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        verdict.loadable = true;
    } else {
        verdict.detail = output.empty() ? "exited with status " + std::to_string(WEXITSTATUS(status))
                                        : output;
    }
    return verdict;
}

}  // namespace

LoadProbeVerdict probe_load(const ObjectCode& code, const LoadProbeOptions& options) {
    // Malformed containers never need a probe: the same refusal as load().
    try {
        detail::validate_code(code.code_type(), code.code());
    } catch (const InvalidArgumentError& e) {
        throw InvalidArgumentError("probe_load: cannot load " + describe(code) + ": " + e.what());
    }
    // Without a driver the probe reports that, as loading here would.
    const int ordinal = detail::driver_available() ? Device::current().ordinal() : 0;
    const XXH128_hash_t hash = XXH3_128bits(code.code().data(), code.size());
    const VerdictKey key{hash.high64, hash.low64, code.code_type(), ordinal};
    VerdictCache& cache = verdict_cache();
    {
        std::lock_guard lock(cache.mutex);
        if (auto found = cache.verdicts.find(key); found != cache.verdicts.end()) {
            LoadProbeVerdict verdict = found->second;
            verdict.cached = true;
            return verdict;
        }
    }
    // Concurrent first probes of the same code may both run; they agree.
    const LoadProbeVerdict verdict = run_probe(find_probe(options), code, ordinal, options.timeout);
    std::lock_guard lock(cache.mutex);
    return cache.verdicts.try_emplace(key, verdict).first->second;
}

void detail::forget_load_probe_verdicts() noexcept {
    VerdictCache& cache = verdict_cache();
    std::lock_guard lock(cache.mutex);
    cache.verdicts.clear();
}

void checked_load(const ObjectCode& code, const LoadProbeOptions& options) {
    const LoadProbeVerdict verdict = probe_load(code, options);
    if (verdict.crashed) {
        throw InvalidArgumentError("checked_load: " + describe(code) +
                                   " is not safe to load: the probe process loading it was " +
                                   verdict.detail + "; it was not loaded in this process");
    }
    // code.load(), through the runtime's own call (ObjectCode::load is a crossing, defined above).
    detail::loaded_library(*detail::ObjectCodeAccess::state(code), {});
}

}  // namespace cudacore
