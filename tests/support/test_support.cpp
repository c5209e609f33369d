#include "test_support.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/system.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>
#include <stdexcept>

namespace cudacore::test {

std::string gpu_unavailable_reason() {
    if (!system::driver_available()) {
        try {
            system::driver_version();
        } catch (const Error& e) {
            return e.what();
        }
        return "no CUDA driver";
    }
    if (system::device_count() == 0) return "the CUDA driver reports no device";
    return {};
}

std::size_t saxpy_mismatches(const Kernel& kernel, std::size_t n) {
    Device device(0);
    Stream stream = device.create_stream();
    std::mt19937 random(7);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<float> x(n), y(n);
    for (auto& v : x) v = uniform(random);
    for (auto& v : y) v = uniform(random);
    Buffer dx = device.allocate(n * sizeof(float), stream);
    Buffer dy = device.allocate(n * sizeof(float), stream);
    dx.copy_from(x, stream);
    dy.copy_from(y, stream);
    const float a = 2.5f;
    launch(stream, LaunchConfig{.grid = unsigned((n + 255) / 256), .block = 256}, kernel, a, dx,
           dy, n);
    std::vector<float> out(n);
    dy.copy_to(out, stream);
    stream.sync();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i)
        if (std::abs(out[i] - (a * x[i] + y[i])) > 1e-5f) ++wrong;
    return wrong;
}

std::filesystem::path executable_dir() {
    return std::filesystem::read_symlink("/proc/self/exe").parent_path();
}

std::filesystem::path helper_path(const std::string& name) {
    return executable_dir() / ("helper_" + name);
}

std::string read_test_data(const std::string& name) {
    const std::filesystem::path path = executable_dir() / "data" / name;
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("test data file missing: " + path.string());
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

std::filesystem::path cli_path() { return executable_dir().parent_path() / "tools" / "cudacore"; }

namespace {

// ASan and TSan reserve terabytes of address space: RLIMIT_AS cannot bound their processes.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool address_space_sanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool address_space_sanitizer = true;
#else
constexpr bool address_space_sanitizer = false;
#endif
#else
constexpr bool address_space_sanitizer = false;
#endif

// In the child, before exec: failures are reported and end the child.
void apply_limits(const ProcessLimits& limits) {
    auto set = [](int resource, std::uint64_t value, const char* name) {
        const rlimit limit{static_cast<rlim_t>(value), static_cast<rlim_t>(value)};
        if (setrlimit(resource, &limit) != 0) {
            std::fprintf(stderr, "setrlimit(%s) failed: %s\n", name, std::strerror(errno));
            _exit(126);
        }
    };
    if (limits.address_space_bytes != 0 && !address_space_sanitizer)
        set(RLIMIT_AS, limits.address_space_bytes, "RLIMIT_AS");
    if (limits.file_size_bytes != 0) {
        signal(SIGXFSZ, SIG_IGN);  // kept across exec: writes fail with EFBIG instead
        set(RLIMIT_FSIZE, limits.file_size_bytes, "RLIMIT_FSIZE");
    }
}

}  // namespace

pid_t spawn(const std::vector<std::string>& argv) {
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = -1;
    EXPECT_EQ(posix_spawn(&pid, args[0], nullptr, nullptr, args.data(), environ), 0);
    return pid;
}

int wait_for(pid_t pid) {
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::map<std::string, std::string>& env,
                          const ProcessLimits& limits) {
    int out_pipe[2], err_pipe[2];
    if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0) throw std::runtime_error("pipe failed");
    pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
        dup2(out_pipe[1], 1);
        dup2(err_pipe[1], 2);
        close(out_pipe[0]);
        close(err_pipe[0]);
        apply_limits(limits);
        for (const auto& [key, value] : env) {
            if (value.empty()) unsetenv(key.c_str());
            else setenv(key.c_str(), value.c_str(), 1);
        }
        std::vector<char*> args;
        for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        execv(args[0], args.data());
        std::fprintf(stderr, "exec %s failed: %s\n", args[0], std::strerror(errno));
        _exit(127);
    }
    close(out_pipe[1]);
    close(err_pipe[1]);
    ProcessResult result;
    pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
    std::string* sinks[2] = {&result.out, &result.err};
    int open_count = 2;
    char buffer[4096];
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(limits.timeout_seconds);
    bool killed = false;
    while (open_count > 0) {
        int wait_ms = -1;
        if (limits.timeout_seconds != 0) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0 && !killed) {
                kill(pid, SIGKILL);  // its pipes close as it dies
                killed = true;
            }
            wait_ms = killed ? -1 : static_cast<int>(left.count()) + 1;
        }
        const int ready = poll(fds, 2, wait_ms);
        if (ready < 0 && errno == EINTR) continue;
        if (ready < 0) break;
        if (ready == 0) continue;
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
            ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
            if (n > 0) {
                sinks[i]->append(buffer, static_cast<std::size_t>(n));
            } else {
                close(fds[i].fd);
                fds[i].fd = -1;
                --open_count;
            }
        }
    }
    int status = 0;
    waitpid(pid, &status, 0);
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    return result;
}

TempDir::TempDir() {
    std::random_device rd;
    for (int attempt = 0; attempt < 100; ++attempt) {
        auto candidate = std::filesystem::temp_directory_path() /
                         ("cudacore-test-" + std::to_string(rd()) + std::to_string(getpid()));
        std::error_code ec;
        if (std::filesystem::create_directory(candidate, ec)) {
            path_ = candidate;
            return;
        }
    }
    throw std::runtime_error("cannot create a temporary directory");
}

TempDir::~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
}

ScopedEnv::ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value, 1);
    else ::unsetenv(name);
}

ScopedEnv::~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
}

ScopedWorkingDirectory::ScopedWorkingDirectory(const std::filesystem::path& path)
    : old_(std::filesystem::current_path()) {
    std::filesystem::current_path(path);
}

ScopedWorkingDirectory::~ScopedWorkingDirectory() {
    std::error_code ignored;
    std::filesystem::current_path(old_, ignored);
}

bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (!done()) {
        if (std::chrono::steady_clock::now() > end) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
}

std::string read_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

void write_file(const std::filesystem::path& path, const std::string& contents) {
    std::ofstream out(path, std::ios::binary);
    out << contents;
}

std::map<std::string, std::string> fault_injection_env(std::map<std::string, std::string> faults) {
    const char* asan = std::getenv("ASAN_OPTIONS");
    const std::string before = asan && *asan ? std::string(asan) + ":" : "";
    faults["LD_PRELOAD"] = (executable_dir() / "libcudacore_fault_injection.so").string();
    faults["ASAN_OPTIONS"] = before + "verify_asan_link_order=0";
    return faults;
}

}  // namespace cudacore::test
