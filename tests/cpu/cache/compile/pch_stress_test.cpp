// Many processes started at once on one $TMPDIR and one disk cache (more than there are cores:
// the starved case), each compiling small <cuda/std> kernels with automatic PCH through
// compile_cached and compile_many (threads and processes), some killed with SIGKILL at random
// moments. Checks that no process dies of a signal it was not sent, that every result is the
// code a fresh compile gives, byte for byte, and that no PCH folder is left once every process
// is gone and the next one has reclaimed. Bounded to CUDACORE_STRESS_SECONDS (default 40) and,
// when set, CUDACORE_STRESS_COMPILES compiles; CUDACORE_STRESS_PROCESSES at once (default 16);
// CUDACORE_STRESS_HEADER the header the kernels include (pch_stress_kernels.hpp);
// CUDACORE_STRESS_SEED repeats a run. scripts/pch_stress.sh runs it long.
#include "test_support.hpp"

#include "pch_stress_kernels.hpp"

#include "cudacore/compile_many.hpp"
#include "cudacore/program.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <thread>

namespace {

using namespace cudacore;

long environment_number(const char* name, long fallback) {
    const char* value = std::getenv(name);
    return value && *value ? std::strtol(value, nullptr, 10) : fallback;
}

struct Worker {
    pid_t pid = -1;
    int out = -1;
    std::string said;
    bool killed = false;
    std::chrono::steady_clock::time_point kill_at = std::chrono::steady_clock::time_point::max();
};

Worker start_worker(const std::filesystem::path& tmpdir, const std::filesystem::path& cache,
                    const char* mode, int first, int count) {
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    const std::string helper = test::helper_path("pch_stress_worker").string();
    const std::string first_text = std::to_string(first), count_text = std::to_string(count);
    Worker worker;
    worker.pid = ::fork();
    if (worker.pid == 0) {
        ::dup2(out[1], 1);
        ::setenv("TMPDIR", tmpdir.c_str(), 1);
        ::execl(helper.c_str(), helper.c_str(), mode, cache.c_str(), first_text.c_str(),
                count_text.c_str(), static_cast<char*>(nullptr));
        std::_Exit(127);
    }
    ::close(out[1]);
    worker.out = out[0];
    return worker;
}

std::set<std::string> pch_folders(const std::filesystem::path& tmpdir) {
    std::set<std::string> found;
    for (const auto& entry : std::filesystem::directory_iterator(tmpdir))
        if (entry.path().filename().string().starts_with("cudacore-pch-"))
            found.insert(entry.path().filename().string());
    return found;
}

// Reaps the processes left to this one (children of killed workers): it is their subreaper.
void reap_orphans(bool block) {
    while (::waitpid(-1, nullptr, block ? 0 : WNOHANG) > 0) {
    }
}

TEST(PchStress, ProcessesStartingTogetherNeverCrashAndAgreeWithAFreshCompile) {
    const long seconds = environment_number("CUDACORE_STRESS_SECONDS", 40);
    const long compile_target = environment_number("CUDACORE_STRESS_COMPILES", 0);
    const long at_once = environment_number("CUDACORE_STRESS_PROCESSES", 16);
    const unsigned seed = static_cast<unsigned>(environment_number("CUDACORE_STRESS_SEED", std::random_device{}()));
    std::mt19937 random(seed);
    ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);

    // The fresh compiles: one process, no PCH, no cache.
    std::vector<Program> fresh;
    for (int v = 0; v < test::kStressVariants; ++v) {
        ProgramOptions options = test::stress_options(v);
        options.pch = false;
        fresh.emplace_back(test::stress_kernel(v), SourceType::cxx, options);
    }
    std::map<int, std::string> expected;
    {
        CompileOptions many;
        many.workers = 2;
        const std::vector<ObjectCode> codes = compile_many(fresh, CodeType::ptx, {}, many);
        for (int v = 0; v < test::kStressVariants; ++v) {
            char digest[17];
            std::snprintf(digest, sizeof digest, "%016llx",
                          static_cast<unsigned long long>(test::fnv1a(codes[v].code())));
            expected[v] = digest;
        }
    }

    test::TempDir tmpdir, cache;
    // A third use the disk cache (hits after the first compiles of each variant); the rest compile
    // with NVRTC and its PCH every time.
    const char* modes[] = {"threads", "processes", "cached", "plain"};
    long rounds = 0, processes = 0, compiles = 0, kills = 0, wrong = 0, crashes = 0, failures = 0;
    std::ostringstream problems;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (std::chrono::steady_clock::now() < deadline &&
           (compile_target == 0 || compiles < compile_target)) {
        ++rounds;
        std::vector<Worker> workers;
        const auto started = std::chrono::steady_clock::now();
        for (long i = 0; i < at_once; ++i) {
            const char* mode = modes[random() % 4];
            const bool cached = random() % 3 == 0 && std::strcmp(mode, "plain") != 0;
            workers.push_back(start_worker(tmpdir.path(), cached ? cache.path() : "-", mode,
                                           static_cast<int>(random() % test::kStressVariants),
                                           1 + static_cast<int>(random() % 3)));
            // About one in four is killed, at a moment from its start to well into its compiles.
            if (random() % 4 == 0)
                workers.back().kill_at = started + std::chrono::milliseconds(random() % 6000);
        }
        processes += at_once;
        std::size_t open = workers.size();
        while (open > 0) {
            std::vector<pollfd> polled;
            std::vector<Worker*> polled_workers;
            auto next_kill = std::chrono::steady_clock::time_point::max();
            for (Worker& worker : workers) {
                if (worker.out < 0) continue;
                polled.push_back({worker.out, POLLIN, 0});
                polled_workers.push_back(&worker);
                if (!worker.killed) next_kill = std::min(next_kill, worker.kill_at);
            }
            const auto now = std::chrono::steady_clock::now();
            const int wait_ms = next_kill == std::chrono::steady_clock::time_point::max()
                                    ? 1000
                                    : static_cast<int>(std::max<long>(0, std::chrono::duration_cast<std::chrono::milliseconds>(next_kill - now).count()));
            ::poll(polled.data(), polled.size(), wait_ms);
            for (std::size_t i = 0; i < polled.size(); ++i) {
                if (!(polled[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
                Worker& worker = *polled_workers[i];
                char buffer[4096];
                const ssize_t n = ::read(worker.out, buffer, sizeof buffer);
                if (n > 0) {
                    worker.said.append(buffer, static_cast<std::size_t>(n));
                } else if (n == 0 || errno != EINTR) {
                    ::close(worker.out);
                    worker.out = -1;
                    --open;
                }
            }
            for (Worker& worker : workers) {
                if (!worker.killed && worker.out >= 0 && std::chrono::steady_clock::now() >= worker.kill_at) {
                    ::kill(worker.pid, SIGKILL);
                    worker.killed = true;
                    ++kills;
                }
            }
        }
        for (Worker& worker : workers) {
            int status = 0;
            ::waitpid(worker.pid, &status, 0);
            std::istringstream lines(worker.said);
            std::string kind, digest;
            int variant = 0;
            while (lines >> kind) {
                if (kind == "R" && lines >> variant >> digest) {
                    ++compiles;
                    if (expected[variant] != digest) {
                        ++wrong;
                        problems << "variant " << variant << ": " << digest << " instead of "
                                 << expected[variant] << "\n";
                    }
                } else {
                    std::string rest;
                    std::getline(lines, rest);
                    problems << "pid " << worker.pid << ": " << kind << rest << "\n";
                }
            }
            if (WIFSIGNALED(status) && !(worker.killed && WTERMSIG(status) == SIGKILL)) {
                ++crashes;
                problems << "pid " << worker.pid << " died of signal " << WTERMSIG(status) << "\n";
            } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
                ++failures;
                problems << "pid " << worker.pid << " exited with " << WEXITSTATUS(status) << "\n";
            }
        }
        reap_orphans(false);
        if (rounds % 50 == 0) {  // long runs (scripts/pch_stress.sh) show their progress
            std::printf("  after %ld rounds: %ld compiles, %ld killed, %ld crashes, %ld failed, "
                        "%ld wrong\n", rounds, compiles, kills, crashes, failures, wrong);
            std::fflush(stdout);
        }
    }
    reap_orphans(true);  // every process that could hold a PCH folder is gone
    // A process killed between making its folder and locking it leaves it under its private name,
    // reclaimed once ten seconds old (kUnfinishedFolderAge): wait until it is, for the next one.
    const auto unfinished = [&] {
        for (const std::string& name : pch_folders(tmpdir.path()))
            if (name.starts_with("cudacore-pch-new-")) return true;
        return false;
    };
    const auto unfinished_gone = std::chrono::steady_clock::now() + std::chrono::seconds(12);
    while (unfinished() && std::chrono::steady_clock::now() < unfinished_gone)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));

    // The next process reclaims what the killed ones left, and removes its own folder at exit.
    Worker last = start_worker(tmpdir.path(), "-", "plain", 0, 1);
    char buffer[4096];
    ssize_t n = 0;
    while ((n = ::read(last.out, buffer, sizeof buffer)) > 0) last.said.append(buffer, static_cast<std::size_t>(n));
    ::close(last.out);
    int status = 0;
    ::waitpid(last.pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << last.said;
    const std::set<std::string> left = pch_folders(tmpdir.path());

    std::printf("PCH stress (seed %u): %ld processes (%ld at once), %ld rounds, %ld compiles, %ld "
                "killed with SIGKILL, %ld crashes, %ld failed, %ld wrong results, %zu PCH folders left\n",
                seed, processes, at_once, rounds, compiles, kills, crashes, failures, wrong, left.size());
    EXPECT_EQ(crashes, 0) << problems.str();
    EXPECT_EQ(failures, 0) << problems.str();
    EXPECT_EQ(wrong, 0) << problems.str();
    EXPECT_TRUE(left.empty()) << left.size() << " PCH folders left, the first " << (left.empty() ? "" : *left.begin());
    EXPECT_GT(compiles, 0);
}

}  // namespace
