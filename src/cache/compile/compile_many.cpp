#include "cudacore/compile_many.hpp"
#include "cudacore/program_options.hpp"

#include "cache/compile/compile_many_outcomes.hpp"

#include "cudacore/cached_compile.hpp"
#include "cudacore/errors.hpp"
#include "loader/compiler_apis.hpp"
#include "support/parallel_steps.hpp"
#include "support/parent_death.hpp"
#include "support/system_call_error.hpp"

#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>

namespace cudacore {

namespace {

const std::vector<std::string> no_names;

struct Job {
    Program* program;
    CodeType target;
    const std::vector<std::string>* names;
    std::optional<CacheKey> key;  // cache_key alone: which programs are the same compile
    std::optional<ObjectCode> result;
    std::exception_ptr failure;
};

// ---- threads -------------------------------------------------------------------------------

// With a cache, through compile_cached: it keys the code by what NVRTC is given, headers and all
// (cache_key alone does not cover them), and stores it.
// Without one, a plain compile.
void compile_in_thread(Job& job, const CompileOptions& options) {
    try {
        job.result = compile_cached(*job.program, job.target, *job.names, options);
    } catch (...) {
        job.failure = std::current_exception();
    }
}

// Each compile has its own token (a child of compile_many's): a failure cancels those after it,
// so that the compiles in flight behind it stop and no more start, while those before it run
// on: the lowest failing index still wins, whatever finishes first.
// The other workers join after `helpers_after` (parallel_steps.hpp); zero: at once.
void run_threads(const std::vector<Job*>& jobs, unsigned workers, const CompileOptions& options,
                 std::chrono::nanoseconds helpers_after) {
    std::vector<CancellationToken> tokens;
    tokens.reserve(jobs.size());
    for (std::size_t i = 0; i < jobs.size(); ++i) tokens.push_back(options.cancellation.child());
    detail::run_steps(jobs.size(), workers, helpers_after, [&](std::size_t i) {
        CompileOptions own = options;
        own.cancellation = tokens[i];
        compile_in_thread(*jobs[i], own);
        if (jobs[i]->failure)
            for (std::size_t later = i + 1; later < jobs.size(); ++later) tokens[later].cancel();
        return !jobs[i]->failure;
    });
}

// ---- processes -----------------------------------------------------------------------------
// A child writes one message to its pipe and exits: 'O' + ObjectCode::serialize(), or 'C' + a
// CompileError (its NVRTC status, name, log, options), or 'E' + another error's text. Strings
// are length-prefixed.

void put_string(std::string& out, std::string_view text) {
    const std::uint64_t size = text.size();
    out.append(reinterpret_cast<const char*>(&size), sizeof size);
    out.append(text);
}

std::string take_string(std::string_view& in, const char* operation) {
    std::uint64_t size = 0;
    const auto truncated = [&] {
        return Error(std::string(operation) + ": truncated message from a child process");
    };
    if (in.size() < sizeof size) throw truncated();
    std::memcpy(&size, in.data(), sizeof size);
    in.remove_prefix(sizeof size);
    if (in.size() < size) throw truncated();
    std::string out(in.substr(0, size));
    in.remove_prefix(size);
    return out;
}

bool write_all(int fd, std::string_view bytes) {
    while (!bytes.empty()) {
        const ssize_t n = ::write(fd, bytes.data(), bytes.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        bytes.remove_prefix(static_cast<size_t>(n));
    }
    return true;
}

// The leading preprocessor lines of a source (what NVRTC matches a PCH on), blank lines and
// line comments skipped.
std::string leading_directives(std::string_view source) {
    std::string out;
    while (!source.empty()) {
        const std::size_t end = source.find('\n');
        std::string_view line = source.substr(0, end);
        source.remove_prefix(end == std::string_view::npos ? source.size() : end + 1);
        const std::size_t start = line.find_first_not_of(" \t\r");
        if (start == std::string_view::npos) continue;
        line.remove_prefix(start);
        if (line.starts_with("//")) continue;
        if (!line.starts_with("#")) break;
        out.append(line).push_back('\n');
    }
    return out;
}

// Whether a child may use automatic PCH for `program`: only when it most likely uses the PCH the
// parent made for `first` (the same options but for the program's name, which NVRTC's flags do
// not hold, and the same leading directives). A child that made a PCH of its own would write it
// under a file name its siblings (copies of the same NVRTC state) may pick too.
bool child_may_use_pch(const Program& program, const Program* first) {
    if (!first) return false;
    ProgramOptions options = program.options();
    options.name = first->options().name;
    return options == first->options() &&
           leading_directives(program.source()) == leading_directives(first->source());
}

// The child has already asked to die with its parent (start()): a parent killed with SIGKILL
// cannot kill it, and it would compile for no one and hold the parent's PCH folder (its lock).
[[noreturn]] void child_main(Job& job, int fd, const Program* pch_maker,
                             const cpu_set_t* cpus) {
    std::string message;
    try {
        // The CPUs the caller's pool may use (a pool of several MPI ranks' CPUs); an error here
        // leaves the child where it was, which only costs time.
        if (cpus) ::sched_setaffinity(0, sizeof *cpus, cpus);
        Program program = *job.program;
        if (program.source_type() == SourceType::cxx && uses_automatic_pch(program.options())) {
            // A child only reads the PCH its parent made, never writes one: siblings are copies of
            // one NVRTC state, so a PCH each made would go to the same file name in the shared
            // folder, rewritten in place while another child reads it. NVRTC's explicit
            // --use-pch never creates one; its folder stays the same (NVRTC matches a PCH on the
            // command line, --pch-dir included).
            ProgramOptions options = program.options();
            const std::string made = pch_maker ? pch_maker->pch_status().file : std::string();
            const PchOutcome outcome = pch_maker ? pch_maker->pch_status().outcome : PchOutcome::not_attempted;
            if (child_may_use_pch(program, pch_maker) && !made.empty() &&
                (outcome == PchOutcome::created || outcome == PchOutcome::used)) {
                options.pch.reset();
                options.use_pch = made;
                options.pch_dir = std::filesystem::path(made).parent_path().string();
                if (!options.pch_verbose) options.pch_verbose = false;  // as automatic PCH has it
            } else {
                options.pch = false;
            }
            program = Program(program.source(), SourceType::cxx, std::move(options));
        }
        message = 'O' + program.compile(job.target, *job.names).serialize();
    } catch (const CompileError& e) {
        message = 'C';
        put_string(message, std::to_string(static_cast<int>(e.nvrtc_status())));
        put_string(message, e.program_name());
        put_string(message, e.log());
        for (const auto& option : e.options()) put_string(message, option);
    } catch (const std::exception& e) {
        message = 'E';
        put_string(message, e.what());
    } catch (...) {
        message = 'E';
        put_string(message, "unknown exception");
    }
    const bool written = write_all(fd, message);
    ::_exit(written ? 0 : 1);  // no static destructors, no atexit handlers of the parent
}

// `operation` names the call in errors (compile_many, or compile_distributed using its pool).
void read_result(Job& job, const std::string& message, int wait_status, const char* operation) {
    try {
        if (message.empty()) {
            throw Error(std::string(operation) + ": the child process compiling program '" +
                        job.program->options().name + "' sent nothing (wait status " +
                        std::to_string(wait_status) + ")");
        }
        std::string_view rest(message);
        const char kind = rest.front();
        rest.remove_prefix(1);
        if (kind == 'O') {
            job.result = ObjectCode::deserialize(rest);
        } else if (kind == 'C') {
            const std::string status = take_string(rest, operation);
            std::string name = take_string(rest, operation);
            std::string log = take_string(rest, operation);
            std::vector<std::string> options;
            while (!rest.empty()) options.push_back(take_string(rest, operation));
            throw CompileError(std::move(name), std::move(log), std::move(options),
                               job.program->backend(), static_cast<nvrtcResult>(std::atoi(status.c_str())));
        } else {
            throw Error(std::string(operation) + ": program '" + job.program->options().name +
                        "' in a child process: " + take_string(rest, operation));
        }
    } catch (...) {
        job.failure = std::current_exception();
    }
}

// The child processes compiling for one compile_many call, on `cpus` when it is not null.
// Children still running when it is destroyed (after an error in the parent) are killed and
// reaped.
class ChildPool {
public:
    ChildPool(const cpu_set_t* cpus, const char* operation)
        : cpus_(cpus), operation_(operation) {
        detail::nvrtc();  // load once here, not in every child
    }
    ChildPool(const ChildPool&) = delete;
    ChildPool& operator=(const ChildPool&) = delete;
    ~ChildPool() { kill_running(); }

    // Runs every job, at most `workers` children at a time, and waits for them. After one
    // failed, starts no more and kills those running behind it (their jobs left without
    // result), while those before it run on: the lowest failing index wins. When `cancellation`
    // is cancelled, kills them all (a cancelled call's jobs get CompileCancelled).
    void run(const std::vector<Job*>& jobs, unsigned workers, const Program* pch_maker,
             const CancellationToken& cancellation) {
        size_t next = 0;
        size_t first_failed = jobs.size();  // the lowest index that failed
        while (next < jobs.size() || !running_.empty()) {
            if (cancellation.is_cancelled()) {
                // Those running and those not started alike: a job left with neither code nor
                // failure would read as stopped by another's failure.
                for (Child& child : running_) cancel(*child.job);
                for (size_t i = next; i < jobs.size(); ++i) cancel(*jobs[i]);
                kill_running();
                break;
            }
            const bool failed = first_failed < jobs.size();
            if (failed) {
                kill_running_after(jobs, first_failed);
                if (running_.empty()) break;
            }
            while (!failed && next < jobs.size() && running_.size() < workers) {
                // No process to be had while some of ours run: go on with as many as run now.
                if (!start(*jobs[next], pch_maker)) {
                    workers = static_cast<unsigned>(running_.size());
                    break;
                }
                ++next;
            }
            if (failed && running_.empty()) break;
            std::vector<pollfd> polled;
            for (const Child& child : running_) polled.push_back({child.fd, POLLIN, 0});
            // Woken now and then to see the token.
            if (::poll(polled.data(), polled.size(), 20) < 0) {
                if (errno == EINTR) continue;
                throw Error(std::string(operation_) + ": poll failed: " + std::strerror(errno));
            }
            for (size_t i = polled.size(); i-- > 0;) {
                if (!(polled[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
                Child& child = running_[i];
                char buffer[1 << 16];
                const ssize_t n = ::read(child.fd, buffer, sizeof buffer);
                if (n < 0 && errno == EINTR) continue;
                if (n > 0) {
                    child.message.append(buffer, static_cast<size_t>(n));
                    continue;
                }
                finish(child);  // end of file (or a read error: the message is short)
                if (child.job->failure) first_failed = std::min(first_failed, index_of(jobs, child.job));
                running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(i));
            }
        }
    }

private:
    struct Child {
        pid_t pid;
        int fd;
        Job* job;
        std::string message;
    };

    static void cancel(Job& job) {
        job.failure = std::make_exception_ptr(CompileCancelled(job.program->options().name, {}, job.program->backend()));
    }

    static size_t index_of(const std::vector<Job*>& jobs, const Job* job) {
        return static_cast<size_t>(std::find(jobs.begin(), jobs.end(), job) - jobs.begin());
    }

    // Kills the children whose jobs come after jobs[index] (they are left without result).
    void kill_running_after(const std::vector<Job*>& jobs, size_t index) noexcept {
        for (size_t i = running_.size(); i-- > 0;) {
            Child& child = running_[i];
            if (index_of(jobs, child.job) <= index) continue;
            ::kill(child.pid, SIGKILL);
            ::close(child.fd);
            while (::waitpid(child.pid, nullptr, 0) < 0 && errno == EINTR) {
            }
            running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(i));
        }
    }

    void kill_running() noexcept {
        for (Child& child : running_) {
            ::kill(child.pid, SIGKILL);
            ::close(child.fd);
            while (::waitpid(child.pid, nullptr, 0) < 0 && errno == EINTR) {
            }
        }
        running_.clear();
    }

    // Forks a child compiling `job`; it uses the PCH `pch_maker` made in this process when it
    // may (child_may_use_pch), else compiles without PCH. False when fork found no process to
    // be had (EAGAIN) while other children run; throws Error naming the call, errno and the
    // limit otherwise.
    bool start(Job& job, const Program* pch_maker) {
        int fds[2];
        if (::pipe(fds) != 0)
            throw Error(std::string(operation_) + ": " + detail::system_call_failure("pipe", errno));
        const pid_t parent = ::getpid();
        const pid_t pid = ::fork();
        if (pid < 0) {
            const int error = errno;
            ::close(fds[0]);
            ::close(fds[1]);
            if (error == EAGAIN && !running_.empty()) return false;
            throw Error(std::string(operation_) + ": cannot start a child process to compile '" +
                        job.program->options().name + "': " + detail::system_call_failure("fork", error));
        }
        if (pid == 0) {
            detail::die_with_parent(parent);
            ::close(fds[0]);
            child_main(job, fds[1], pch_maker, cpus_);
        }
        ::close(fds[1]);
        running_.push_back({pid, fds[0], &job, {}});
        return true;
    }

    void finish(Child& child) const {
        ::close(child.fd);
        int status = 0;
        while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
        }
        read_result(*child.job, child.message, status, operation_);
    }

    const cpu_set_t* cpus_;
    const char* operation_;
    std::vector<Child> running_;
};

// The jobs to compile: cache hits need no compile (their result is filled in here), and the same
// key twice compiles once.
struct ManyMisses {
    std::vector<Job*> misses;
    std::vector<std::pair<Job*, Job*>> duplicates;  // (job, the miss it repeats)
};

ManyMisses find_misses(std::vector<Job>& jobs, const CompileOptions& options) {
    ManyMisses found;
    if (!options.cache) {
        for (Job& job : jobs) found.misses.push_back(&job);
        return found;
    }
    for (Job& job : jobs) {
        job.key = cache_key(*job.program, job.target, *job.names);
        // An exact hit (the headers it read and the places it looked are as they were).
        if (auto hit = find_cached(*job.program, job.target, *job.names, options)) {
            job.result = std::move(*hit);
            continue;
        }
        auto same = std::find_if(found.misses.begin(), found.misses.end(),
                                 [&](const Job* miss) { return *miss->key == *job.key; });
        if (same != found.misses.end())
            found.duplicates.emplace_back(&job, *same);
        else
            found.misses.push_back(&job);
    }
    return found;
}

// Compiles stopped because another failed (cancelled by compile_many's own token, the caller's
// not cancelled) did not fail themselves: they count as not run.
void forget_stopped(std::vector<Job>& jobs) {
    for (Job& job : jobs) {
        if (!job.failure) continue;
        try {
            std::rethrow_exception(job.failure);
        } catch (const CompileCancelled&) {
            job.failure = nullptr;
        } catch (...) {
        }
    }
}

}  // namespace

namespace detail {

std::vector<ManyOutcome> compile_many_outcomes(const std::vector<Program*>& programs, CodeType target,
                                               const std::vector<const std::vector<std::string>*>& names,
                                               const CompileOptions& many, const cpu_set_t* child_cpus,
                                               const char* operation) {
    return compile_many_outcomes(programs, std::vector<CodeType>(programs.size(), target), names, many,
                                 child_cpus, operation, std::chrono::nanoseconds::zero());
}

std::vector<ManyOutcome> compile_many_outcomes(const std::vector<Program*>& programs,
                                               const std::vector<CodeType>& targets,
                                               const std::vector<const std::vector<std::string>*>& names,
                                               const CompileOptions& many, const cpu_set_t* child_cpus,
                                               const char* operation, std::chrono::nanoseconds helpers_after) {
    std::vector<Job> jobs;
    jobs.reserve(programs.size());
    for (size_t i = 0; i < programs.size(); ++i)
        jobs.push_back({programs[i], targets[i], names[i], std::nullopt, std::nullopt, nullptr});

    auto [misses, duplicates] = find_misses(jobs, many);
    // The compiles' own token: cancelled by the caller's, and by the first failure, which stops
    // the compiles in flight (and those not started) without touching the caller's token.
    CompileOptions each = many;
    each.cancellation = many.cancellation.child();

    const unsigned workers =
        std::max(1u, many.workers ? many.workers : std::thread::hardware_concurrency());
    if (!misses.empty()) {
        Job& first = *misses.front();
        // The first miss compiles in this process, alone among the compiles that may use its
        // PCH: threads use it, and so do children forked after it. With child processes even one
        // worker gains: each child uses the PCH instead of parsing the headers itself.
        const bool pch_first = many.first_alone_for_pch && misses.size() > 1 &&
                               (workers > 1 || many.strategy == CompileStrategy::processes) &&
                               first.program->source_type() == SourceType::cxx &&
                               uses_automatic_pch(first.program->options());
        const std::vector<Job*> rest(misses.begin() + (pch_first ? 1 : 0), misses.end());
        // No child compiles beside the first: children without the PCH (1.2 s each for a
        // <cuda/std> program with 16 at once, against 0.12 s with it) slowed the PCH build more
        // than they gained, and took four times the CPU.
        if (pch_first) compile_in_thread(first, each);
        if (!first.failure && !rest.empty()) {
            if (many.strategy == CompileStrategy::processes)
                ChildPool(child_cpus, operation).run(rest, workers, pch_first ? first.program : nullptr,
                                                     each.cancellation);
            else
                run_threads(rest, workers, each, helpers_after);
        }
    }
    if (!many.cancellation.is_cancelled()) forget_stopped(jobs);
    for (auto [job, miss] : duplicates) {
        job->result = miss->result;
        job->failure = miss->failure;
    }

    std::vector<ManyOutcome> outcomes;
    outcomes.reserve(jobs.size());
    for (Job& job : jobs) outcomes.push_back({std::move(job.result), job.failure});
    return outcomes;
}

}  // namespace detail

std::vector<ObjectCode> compile_many(std::vector<Program>& programs, CodeType target,
                                     const std::vector<std::vector<std::string>>& name_expressions,
                                     const CompileOptions& many) {
    if (!name_expressions.empty() && name_expressions.size() != programs.size()) {
        throw InvalidArgumentError("compile_many: " + std::to_string(name_expressions.size()) +
                                   " lists of name expressions for " +
                                   std::to_string(programs.size()) + " programs");
    }
    std::vector<Program*> each;
    std::vector<const std::vector<std::string>*> names;
    for (size_t i = 0; i < programs.size(); ++i) {
        each.push_back(&programs[i]);
        names.push_back(name_expressions.empty() ? &no_names : &name_expressions[i]);
    }
    std::vector<detail::ManyOutcome> outcomes = detail::compile_many_outcomes(each, target, names, many, nullptr, "compile_many");
    for (const auto& outcome : outcomes) {
        if (outcome.failure) std::rethrow_exception(outcome.failure);
    }
    std::vector<ObjectCode> out;
    out.reserve(outcomes.size());
    for (size_t i = 0; i < outcomes.size(); ++i) {
        if (!outcomes[i].code) {
            throw Error("compile_many: program '" + programs[i].options().name +
                        "' was not compiled (an earlier failure stopped the pool)");
        }
        out.push_back(std::move(*outcomes[i].code));
    }
    return out;
}

std::vector<ObjectCode> compile_many(const std::string& source, const ProgramOptions& program_options,
                                     CodeType target,
                                     const std::vector<std::vector<std::string>>& name_expressions,
                                     const CompileOptions& many) {
    std::vector<Program> programs;
    programs.reserve(name_expressions.size());
    for (size_t i = 0; i < name_expressions.size(); ++i)
        programs.emplace_back(source, SourceType::cxx, program_options);
    return compile_many(programs, target, name_expressions, many);
}

// The deprecated form, with the name expressions before the target.
std::vector<ObjectCode> compile_many(const std::string& source,
                                     const std::vector<std::vector<std::string>>& name_expressions,
                                     CodeType target, const ProgramOptions& program_options,
                                     const CompileOptions& options) {
    return compile_many(source, program_options, target, name_expressions, options);
}

}  // namespace cudacore
