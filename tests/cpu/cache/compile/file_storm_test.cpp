// Files that change under compiles. Many processes (tests/helpers/file_storm_worker.cpp) compile
// small programs (tests/support/file_storm_programs.hpp) through one disk cache, and through one
// header bundle whose folder lies in that cache folder, while a storm thread of this test edits
// (in place, the same size or another, or through a shared mapping with the mtime put back),
// creates, removes, renames and swaps
// (renameat2(RENAME_EXCHANGE)) headers and whole folders at random moments: in the include
// folders, and in the bundle's folder (a header edited, a subfolder replaced by a symbolic link
// or swapped for a copy, the whole folder or the bundle root swapped).
//
// Each header's value appears in the PTX, and the storm logs every state it made, with the
// monotonic clock (which every process shares) before and after each change. The checks:
//   - during the storm, each value a compile returned (from the cache or compiled) is one its
//     header held at some moment while that compile ran (a reader may also catch a header empty
//     while it is rewritten, or digits of a same-size edit half written); a bundle's value is
//     always the bundle's own, whatever its folder holds;
//   - when the storm stops, each program compiled through the cache (a new process) is, byte for
//     byte, what a plain compile (Program::compile, no cache, the bundle from memory) makes of
//     the files as they are then;
//   - no compile fails, no worker dies.
// It prints the figures: processes, compiles (from the cache, compiled, not cached), file
// changes, swaps, bundle changes, wrong results (by slot) and failures.
//
// Environment: CUDACORE_STORM_SECONDS (storm length, default 40), CUDACORE_STORM_PROCESSES (at
// once, default 4), CUDACORE_STORM_PAUSE_MS (mean of the short pauses between changes, default
// 40; one pause in ten is a calm 5 to 30 times as long),
// CUDACORE_STORM_OPS (a comma-separated subset of edit,map-edit,create,remove,rename,swap,
// bundle-edit,bundle-link,bundle-swap; default all), CUDACORE_STORM_SEED (repeats a storm's choices),
// CUDACORE_STORM_PLAIN=1 (the workers compile without the cache: checks the checker, which must
// then find nothing wrong during the storm), CUDACORE_STORM_LOG (a file for the storm's log).
// scripts/file_storm.sh runs it long.
#include "file_storm_programs.hpp"
#include "temporary_cache_folder.hpp"
#include "test_support.hpp"

#include <fcntl.h>
#include <poll.h>
#include <stdio.h>  // renameat2
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <stop_token>
#include <thread>

namespace {

using namespace cudacore;
namespace fs = std::filesystem;
using Values = std::array<std::int64_t, 2>;  // what <cfg.h> and <sub/val.h> resolve to

long environment_number(const char* name, long fallback) {
    const char* value = std::getenv(name);
    return value && *value ? std::strtol(value, nullptr, 10) : fallback;
}

long long now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

enum class Op { edit, map_edit, create, remove, rename, swap, bundle_edit, bundle_link, bundle_swap };

const std::map<std::string, Op>& op_names() {
    static const std::map<std::string, Op> names = {
        {"edit", Op::edit},       {"map-edit", Op::map_edit},       {"create", Op::create},
        {"remove", Op::remove},
        {"rename", Op::rename},   {"swap", Op::swap},               {"bundle-edit", Op::bundle_edit},
        {"bundle-link", Op::bundle_link}, {"bundle-swap", Op::bundle_swap}};
    return names;
}

std::vector<Op> chosen_ops() {
    const char* text = std::getenv("CUDACORE_STORM_OPS");
    std::vector<Op> ops;
    std::istringstream names(text && *text ? text : "");
    for (std::string name; std::getline(names, name, ',');) {
        const auto it = op_names().find(name);
        if (it == op_names().end()) throw std::invalid_argument("CUDACORE_STORM_OPS: no operation '" + name + "'");
        ops.push_back(it->second);
    }
    if (ops.empty())
        for (const auto& [name, op] : op_names()) ops.push_back(op);
    return ops;
}

// One change the storm made: when it began and ended, what the includes resolved to before and
// after, and what a reader may have caught meanwhile.
struct Change {
    Op op{};
    long long begin = 0, end = 0;
    Values before{}, after{};
    int torn_slot = -1;   // a same-size edit in place: digits of both values mixed
    int empty_slot = -1;  // a header written in place: empty for a moment
};

// The first change that ended at or after `start` (changes follow one another: their begin and
// end times both increase).
std::size_t first_change_since(const std::vector<Change>& changes, long long start) {
    return static_cast<std::size_t>(
        std::lower_bound(changes.begin(), changes.end(), start,
                         [](const Change& change, long long at) { return change.end < at; }) -
        changes.begin());
}

// What the include of `slot` resolved to when `start` came.
std::int64_t held_at(const std::vector<Change>& changes, const Values& initial, int slot, std::size_t first) {
    return first == 0 ? initial[slot] : changes[first - 1].after[slot];
}

// What the include of `slot` resolved to from `start` to `end`, for messages.
std::string held_between(const std::vector<Change>& changes, const Values& initial, int slot,
                         long long start, long long end) {
    const std::size_t first = first_change_since(changes, start);
    std::string text = std::to_string(held_at(changes, initial, slot, first));
    for (std::size_t i = first; i < changes.size() && changes[i].begin <= end; ++i)
        if (changes[i].after[slot] != changes[i].before[slot]) text += " " + std::to_string(changes[i].after[slot]);
    return text;
}

// Whether each digit of `value` is the one of `a` or of `b` (a same-size edit caught halfway).
bool digits_mixed(std::int64_t a, std::int64_t b, std::int64_t value) {
    if (a == test::kNoValue || b == test::kNoValue || value == test::kNoValue) return false;
    for (int digit = 0; digit < 9; ++digit, a /= 10, b /= 10, value /= 10)
        if (value % 10 != a % 10 && value % 10 != b % 10) return false;
    return true;
}

// Whether the include of `slot` resolved to `value` at some moment from `start` to `end`: the
// value it held when `start` came, or one a change made (or showed halfway) before `end`.
bool held_during(const std::vector<Change>& changes, const Values& initial, int slot,
                 std::int64_t value, long long start, long long end) {
    const std::size_t first = first_change_since(changes, start);
    if (value == held_at(changes, initial, slot, first)) return true;
    for (std::size_t i = first; i < changes.size() && changes[i].begin <= end; ++i) {
        const Change& change = changes[i];
        if (value == change.after[slot]) return true;
        if (change.empty_slot == slot && value == test::kNoValue) return true;
        if (change.torn_slot == slot && digits_mixed(change.before[slot], change.after[slot], value))
            return true;
    }
    return false;
}

bool write_file_with(const fs::path& path, const std::string& text, int flags) {
    const int fd = ::open(path.c_str(), flags | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) return false;
    const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    return ::close(fd) == 0 && written;
}

bool write_at(const fs::path& path, std::size_t offset, const std::string& text) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return false;
    const bool written = ::pwrite(fd, text.data(), text.size(), static_cast<off_t>(offset)) ==
                         static_cast<ssize_t>(text.size());
    return ::close(fd) == 0 && written;
}

bool exchange(const fs::path& a, const fs::path& b) {
    return ::renameat2(AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), RENAME_EXCHANGE) == 0;
}

bool is_link(const fs::path& path) {
    std::error_code error;
    return fs::is_symlink(fs::symlink_status(path, error));
}

// The work folder: include folders A/ (empty at first) and B/ (cfg.h, sub/val.h), and spare/,
// where the storm keeps what it swaps in and what it moves away.
void make_work_folder(const fs::path& work) {
    fs::create_directories(work / "A");
    fs::create_directories(work / "B/sub");
    fs::create_directories(work / "spare/A/sub");
    fs::create_directories(work / "spare/subB");
    test::write_file(work / "B/cfg.h", test::storm_header(0, 1));
    test::write_file(work / "B/sub/val.h", test::storm_header(1, 1));
    test::write_file(work / "spare/A/cfg.h", test::storm_header(0, 2));
    test::write_file(work / "spare/A/sub/val.h", test::storm_header(1, 2));
    test::write_file(work / "spare/subB/val.h", test::storm_header(1, 3));
    test::write_file(work / "spare/cfgB", test::storm_header(0, 3, 2));
}

// Another user's copies of the bundle's folder (same names, same sizes, manifest and all, other
// values): attack/whole (the folder), attack/sub-link and attack/sub-swap (its storm/sub), and
// attack/root (a bundle root holding the copy).
void make_attack_copies(const fs::path& bundle_folder, const fs::path& attack) {
    fs::create_directories(attack);
    fs::copy(bundle_folder, attack / "whole", fs::copy_options::recursive);
    const auto set_value = [](const fs::path& header, std::int64_t version) {
        ASSERT_TRUE(write_at(header, test::storm_value_offset(test::kBundleSlot),
                             test::storm_value_text(test::kBundleSlot, version)));
    };
    set_value(attack / "whole/storm/sub/bval.h", 2);
    fs::copy(attack / "whole/storm/sub", attack / "sub-link", fs::copy_options::recursive);
    set_value(attack / "sub-link/bval.h", 3);
    fs::copy(attack / "whole/storm/sub", attack / "sub-swap", fs::copy_options::recursive);
    set_value(attack / "sub-swap/bval.h", 4);
    fs::create_directories(attack / "root");
    fs::copy(attack / "whole", attack / "root" / bundle_folder.filename(), fs::copy_options::recursive);
    set_value(attack / "root" / bundle_folder.filename() / "storm/sub/bval.h", 5);
}

struct StormCounts {
    long changes = 0;         // file changes in the include folders
    long swaps = 0;           // renameat2(RENAME_EXCHANGE), include and bundle folders
    long bundle_changes = 0;  // changes in the bundle's folder and its root
    long refused = 0;         // operations the file system refused (a folder being remade)
};

// The storm: one change after another at random moments until stopped, each logged.
class Storm {
public:
    Storm(fs::path work, fs::path bundle_folder, std::vector<Op> ops, unsigned seed, long pause_ms)
        : work_(std::move(work)), bundle_(std::move(bundle_folder)), root_(bundle_.parent_path()),
          attack_(work_ / "attack"), ops_(std::move(ops)), random_(seed), pause_ms_(pause_ms) {
        initial_ = current_ = resolve();
    }

    void run(const std::stop_token& stop) {
        while (!stop.stop_requested()) {
            std::this_thread::sleep_for(pause());
            const Op op = ops_[random_() % ops_.size()];
            Change change;
            change.op = op;
            change.before = current_;
            change.begin = now_ns();
            if (apply(op, change)) count(op);
            else ++counts_.refused;
            change.end = now_ns();
            change.after = current_ = resolve();
            if (change.after != change.before || change.torn_slot >= 0 || change.empty_slot >= 0)
                changes_.push_back(change);
        }
    }

    const std::vector<Change>& changes() const { return changes_; }
    const Values& initial() const { return initial_; }
    const Values& current() const { return current_; }
    const StormCounts& counts() const { return counts_; }

private:
    // What <cfg.h> and <sub/val.h> resolve to: A/ first, then B/.
    Values resolve() const {
        Values values{};
        for (int slot = 0; slot < 2; ++slot) {
            values[slot] = test::kNoValue;
            for (const char* folder : {"A", "B"}) {
                std::ifstream in(work_ / folder / test::kStormIncludes[slot], std::ios::binary);
                if (!in) continue;
                const std::string text{std::istreambuf_iterator<char>(in), {}};
                values[slot] = test::storm_value_in(text, slot);
                break;
            }
        }
        return values;
    }

    bool apply(Op op, Change& change) {
        switch (op) {
        case Op::edit: return edit(change);
        case Op::map_edit: return map_edit(change);
        case Op::create: return create(change);
        case Op::remove: return remove();
        case Op::rename: return rename();
        case Op::swap: return swap();
        case Op::bundle_edit: return bundle_edit();
        case Op::bundle_link: return bundle_link();
        case Op::bundle_swap: return bundle_swap();
        }
        return false;
    }

    // The storm's own pace (a random moment for the next change), not a wait for anything:
    // mostly short pauses (pause_ms on average), and one in ten a calm 5 to 30 times as long, in
    // which compiles finish untouched and are cached, to be looked up once files change again.
    std::chrono::microseconds pause() {
        const long us = 1000 * pause_ms_;
        return std::chrono::microseconds(random_() % 10 == 0 ? us * (5 + random_() % 26)
                                                             : random_() % (2 * us + 1));
    }

    void count(Op op) {
        const bool bundle = op == Op::bundle_edit || op == Op::bundle_link || op == Op::bundle_swap;
        ++(bundle ? counts_.bundle_changes : counts_.changes);
        if (op == Op::swap || op == Op::bundle_swap) ++counts_.swaps;
    }

    std::int64_t next_version() { return next_version_++; }
    int pick(int n) { return static_cast<int>(random_() % static_cast<unsigned>(n)); }
    fs::path header(const char* folder, int slot) const { return work_ / folder / test::kStormIncludes[slot]; }

    // A header of A/ or B/ edited in place: its value's digits rewritten (the same size), or the
    // file truncated and written again with other padding (another size), as editors save.
    bool edit(Change& change) {
        const int slot = pick(2);
        const fs::path path = header(pick(2) == 0 ? "A" : "B", slot);
        if (!fs::exists(path)) return false;
        if (pick(2) == 0) {
            change.torn_slot = slot;
            return write_at(path, test::storm_value_offset(slot), test::storm_value_text(slot, next_version()));
        }
        change.empty_slot = slot;
        return write_file_with(path, test::storm_header(slot, next_version(), pick(5)), O_TRUNC);
    }

    // A header of A/ or B/ edited through a shared mapping, the same size, its mtime put back: only
    // its bytes (and ctime) say that it changed.
    bool map_edit(Change& change) {
        const int slot = pick(2);
        const fs::path path = header(pick(2) == 0 ? "A" : "B", slot);
        const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
        if (fd < 0) return false;
        const std::string text = test::storm_value_text(slot, next_version());
        const std::size_t offset = test::storm_value_offset(slot);
        struct stat before {};
        bool done = false;
        if (::fstat(fd, &before) == 0 && static_cast<std::size_t>(before.st_size) >= offset + text.size()) {
            const auto size = static_cast<std::size_t>(before.st_size);
            void* mapped = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            if (mapped != MAP_FAILED) {
                change.torn_slot = slot;
                std::memcpy(static_cast<char*>(mapped) + offset, text.data(), text.size());
                ::munmap(mapped, size);
                const struct timespec times[2] = {before.st_atim, before.st_mtim};
                done = ::futimens(fd, times) == 0;
            }
        }
        ::close(fd);
        return done;
    }

    // A header created in A/, searched before B/ (its folder made when missing).
    bool create(Change& change) {
        const int slot = pick(2);
        const fs::path path = header("A", slot);
        std::error_code error;
        fs::create_directories(path.parent_path(), error);
        change.empty_slot = slot;
        return write_file_with(path, test::storm_header(slot, next_version(), pick(3)), O_CREAT | O_EXCL);
    }

    // A header of A/ removed, or the folder A/sub with what it holds.
    bool remove() {
        std::error_code error;
        const int which = pick(3);
        const fs::path path = which == 2 ? work_ / "A/sub" : header("A", which);
        return fs::remove_all(path, error) > 0;
    }

    // A header saved by rename (written beside, renamed over it, in A/ or B/), or A/cfg.h or the
    // folder A/sub moved away to spare/, or moved back.
    bool rename() {
        const int which = pick(3);
        if (which == 0) {
            const int slot = pick(2);
            const fs::path path = header(pick(2) == 0 ? "A" : "B", slot);
            const fs::path fresh = work_ / "spare/saved";
            test::write_file(fresh, test::storm_header(slot, next_version(), pick(3)));
            return ::rename(fresh.c_str(), path.c_str()) == 0;
        }
        const fs::path in_place = which == 1 ? header("A", 0) : work_ / "A/sub";
        const fs::path away = work_ / "spare" / (which == 1 ? "cfg-away" : "sub-away");
        if (fs::exists(in_place)) {
            std::error_code error;
            fs::remove_all(away, error);
            return ::rename(in_place.c_str(), away.c_str()) == 0;
        }
        return ::rename(away.c_str(), in_place.c_str()) == 0;
    }

    // renameat2(RENAME_EXCHANGE) of B/sub, the whole folder A or B/cfg.h with its spare (given a
    // new value first, half the time).
    bool swap() {
        const int which = pick(3);
        const fs::path spare = work_ / "spare" / (which == 0 ? "subB" : which == 1 ? "A" : "cfgB");
        const fs::path in_place = which == 0 ? work_ / "B/sub" : which == 1 ? work_ / "A" : header("B", 0);
        const int slot = which == 2 ? 0 : 1;
        const fs::path spare_header = which == 2 ? spare : spare / (which == 0 ? "val.h" : "sub/val.h");
        if (pick(2) == 0 && fs::exists(spare_header.parent_path())) {
            test::write_file(work_ / "spare/saved", test::storm_header(slot, next_version(), pick(3)));
            ::rename((work_ / "spare/saved").c_str(), spare_header.c_str());
        }
        return exchange(in_place, spare);
    }

    fs::path bundle_header() const { return bundle_ / "storm/sub/bval.h"; }

    // The bundle's header edited in place, the same size: another value, or its own back.
    bool bundle_edit() {
        const std::int64_t version = pick(2) == 0 ? 1 : next_version();
        return write_at(bundle_header(), test::storm_value_offset(test::kBundleSlot),
                        test::storm_value_text(test::kBundleSlot, version));
    }

    // The bundle's subfolder storm/sub, or the bundle root (header-bundles), replaced by a
    // symbolic link to another user's copy; or the link taken away and the folder put back.
    bool bundle_link() {
        const bool root = pick(2) == 0;
        const fs::path path = root ? root_ : bundle_ / "storm/sub";
        const fs::path held = attack_ / (root ? "held-root" : "held-sub");
        const fs::path target = root ? attack_ / "root" : attack_ / "sub-link";
        std::error_code error;
        if (is_link(path)) {
            fs::remove(path, error);
            return ::rename(held.c_str(), path.c_str()) == 0;
        }
        fs::remove_all(held, error);
        if (::rename(path.c_str(), held.c_str()) != 0) return false;
        fs::create_directory_symlink(target, path, error);
        return !error;
    }

    // renameat2(RENAME_EXCHANGE) of the bundle's subfolder storm/sub, or of the whole bundle
    // folder, with another user's copy (and back, the next time).
    bool bundle_swap() {
        if (pick(2) == 0) return exchange(bundle_ / "storm/sub", attack_ / "sub-swap");
        return exchange(bundle_, attack_ / "whole");
    }

    fs::path work_, bundle_, root_, attack_;
    std::vector<Op> ops_;
    std::mt19937 random_;
    long pause_ms_;
    std::int64_t next_version_ = 10;
    Values initial_{}, current_{};
    std::vector<Change> changes_;
    StormCounts counts_;
};

// A worker process and what it has said so far.
struct Worker {
    pid_t pid = -1;
    int out = -1;
    std::string said;
    int status = 0;  // waitpid's, once it has ended
};

Worker start_worker(const std::vector<std::string>& argv) {
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
    Worker worker;
    worker.pid = ::fork();
    if (worker.pid == 0) {
        ::dup2(out[1], 1);
        std::vector<char*> args;
        for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
        args.push_back(nullptr);
        ::execv(args[0], args.data());
        std::_Exit(127);
    }
    ::close(out[1]);
    worker.out = out[0];
    return worker;
}

// What the compiles during the storm gave, and what was wrong with them.
struct Tally {
    long compiles = 0, from_cache = 0, not_cached = 0, failures = 0, crashes = 0;
    long wrong_include = 0;  // a value of <cfg.h> or <sub/val.h> their files never held meanwhile
    long wrong_bundle = 0;   // a bundle value other than the bundle's own
    long wrong_from_cache = 0, wrong_compiled = 0;
    std::map<std::string, long> not_cached_why;  // by the warning's reason (its program name left out)
    // The first few of each kind, for the failure message: wrong results, then failures.
    std::ostringstream wrong_lines, failure_lines;
    long wrong_shown = 0, failures_shown = 0;
    void wrong(const std::string& text) {
        if (++wrong_shown <= 20) wrong_lines << text << "\n";
    }
    void failed(const std::string& text) {
        if (++failures_shown <= 20) failure_lines << text << "\n";
    }
};

// Checks one "R" line of a worker against the storm's log.
void check_compile(const std::string& line, const Storm& storm, Tally& tally) {
    std::istringstream in(line);
    std::string tag, value[test::kStormSlots];
    int program = 0, compiled = 0;
    long long start = 0, end = 0;
    in >> tag >> program >> start >> end >> compiled >> value[0] >> value[1] >> value[2];
    ++tally.compiles;
    tally.from_cache += compiled == 0 ? 1 : 0;
    bool include_wrong = false, bundle_wrong = false;
    for (int slot = 0; slot < 2; ++slot) {
        const std::int64_t got = value[slot] == "none" ? test::kNoValue
                                 : value[slot] == "?"  ? 0
                                                       : std::stoll(value[slot]);
        include_wrong = include_wrong ||
                        !held_during(storm.changes(), storm.initial(), slot, got, start, end);
    }
    if (test::storm_program_bundled(program))
        bundle_wrong = value[test::kBundleSlot] != std::to_string(test::storm_bundle_value());
    if (!include_wrong && !bundle_wrong) return;
    tally.wrong_include += include_wrong ? 1 : 0;
    tally.wrong_bundle += bundle_wrong ? 1 : 0;
    ++(compiled ? tally.wrong_compiled : tally.wrong_from_cache);
    tally.wrong("wrong (" + std::string(compiled ? "compiled" : "from the cache") + "): " + line +
                  "; meanwhile <cfg.h> held " + held_between(storm.changes(), storm.initial(), 0, start, end) +
                  ", <sub/val.h> " + held_between(storm.changes(), storm.initial(), 1, start, end));
}

void take_output(const Worker& worker, const Storm& storm, Tally& tally) {
    std::istringstream lines(worker.said);
    for (std::string line; std::getline(lines, line);) {
        if (line.starts_with("R ")) {
            check_compile(line, storm, tally);
        } else if (line.starts_with("W not_cached")) {
            ++tally.not_cached;
            const std::size_t why = line.find("not cached: ");
            ++tally.not_cached_why[why == std::string::npos ? line : line.substr(why + 12)];
        } else {
            ++tally.failures;
            tally.failed("pid " + std::to_string(worker.pid) + ": " + line);
        }
    }
    if (!WIFEXITED(worker.status) || WEXITSTATUS(worker.status) != 0) {
        ++tally.crashes;
        tally.failed("pid " + std::to_string(worker.pid) + " ended with status " +
                      std::to_string(worker.status));
    }
}

// Reads what the running workers say; those that end are taken out of `running`.
void read_workers(std::vector<Worker>& running, std::vector<Worker>& ended) {
    std::vector<pollfd> polled;
    for (const Worker& worker : running) polled.push_back({worker.out, POLLIN, 0});
    ::poll(polled.data(), polled.size(), 200);
    for (std::size_t i = polled.size(); i-- > 0;) {
        if (!(polled[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        char buffer[4096];
        const ssize_t n = ::read(running[i].out, buffer, sizeof buffer);
        if (n > 0) {
            running[i].said.append(buffer, static_cast<std::size_t>(n));
        } else if (n == 0 || errno != EINTR) {
            ::close(running[i].out);
            ::waitpid(running[i].pid, &running[i].status, 0);
            ended.push_back(std::move(running[i]));
            running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
        }
    }
}

// Keeps `at_once` workers compiling until `seconds` have passed, then stops the storm and waits
// for the last workers. Returns every worker that ran (counted in `processes`).
std::vector<Worker> compile_through_the_storm(const fs::path& work, long seconds, long at_once,
                                              unsigned seed, std::stop_source storm) {
    const char* mode = environment_number("CUDACORE_STORM_PLAIN", 0) != 0 ? "plain" : "compile";
    std::mt19937 random(seed);
    std::vector<Worker> running, ended;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (true) {
        const bool storming = std::chrono::steady_clock::now() < deadline;
        if (!storming) storm.request_stop();
        while (storming && static_cast<long>(running.size()) < at_once) {
            running.push_back(start_worker({test::helper_path("file_storm_worker").string(), mode,
                                            work.string(), std::to_string(1 + random() % 24),
                                            std::to_string(random())}));
        }
        if (running.empty()) return ended;
        read_workers(running, ended);
    }
}

// When the storm has stopped: each program through the cache (a new process) against a plain
// compile of the files as they are. Counts a difference in `wrong_final`, a failed compile (or a
// plain compile that does not show the files' values: the harness is wrong) in `tally.failures`.
long check_final(const fs::path& work, const Storm& storm, Tally& tally) {
    const test::ProcessResult result =
        test::run_process({test::helper_path("file_storm_worker").string(), "final", work.string()});
    long wrong_final = 0, checked = 0;
    std::istringstream lines(result.out);
    for (std::string line; std::getline(lines, line);) {
        std::istringstream in(line);
        std::string tag, cached[4], plain[4];
        int program = 0, compiled = 0;
        in >> tag >> program >> compiled;
        if (tag != "F") {
            ++tally.failures;
            tally.failed("final: " + line);
            continue;
        }
        ++checked;
        for (std::string& field : cached) in >> field;
        for (std::string& field : plain) in >> field;
        if (cached[3] != plain[3]) {
            ++wrong_final;
            tally.wrong("wrong after the storm (" + std::string(compiled ? "compiled" : "from the cache") +
                          "): " + line);
        }
        const std::string expected[3] = {
            std::to_string(storm.current()[0]), std::to_string(storm.current()[1]),
            test::storm_program_bundled(program) ? std::to_string(test::storm_bundle_value()) : "-"};
        if (plain[0] != expected[0] || plain[1] != expected[1] || plain[2] != expected[2]) {
            ++tally.failures;
            tally.failed("a plain compile does not show the files' values " + expected[0] + " " +
                          expected[1] + " " + expected[2] + ": " + line);
        }
    }
    if (result.exit_code != 0 || checked != test::kStormPrograms) {
        ++tally.failures;
        tally.failed("final worker: exit " + std::to_string(result.exit_code) + ", " +
                      std::to_string(checked) + " programs checked; " + result.err);
    }
    return wrong_final;
}

// The storm's log, one line per change ("<begin ns> <end ns> <operation> <values before> ->
// <values after>"), to `path` (CUDACORE_STORM_LOG), for looking into a wrong result.
void write_log(const char* path, const Storm& storm) {
    std::ofstream out(path);
    out << "initial " << storm.initial()[0] << " " << storm.initial()[1] << "\n";
    for (const Change& change : storm.changes()) {
        std::string name;
        for (const auto& [text, op] : op_names())
            if (op == change.op) name = text;
        out << change.begin << " " << change.end << " " << name << " " << change.before[0] << " "
            << change.before[1] << " -> " << change.after[0] << " " << change.after[1] << "\n";
    }
}

std::string op_list(const std::vector<Op>& ops) {
    std::string text;
    for (const auto& [name, op] : op_names())
        if (std::find(ops.begin(), ops.end(), op) != ops.end()) text += (text.empty() ? "" : ",") + name;
    return text;
}

TEST(FileStorm, EveryCompileThroughTheCacheIsTheCodeOfItsHeaders) {
    const long seconds = environment_number("CUDACORE_STORM_SECONDS", 40);
    const long at_once = std::max(1L, environment_number("CUDACORE_STORM_PROCESSES", 4));
    const long pause_ms = std::max(1L, environment_number("CUDACORE_STORM_PAUSE_MS", 40));
    const unsigned seed = static_cast<unsigned>(environment_number("CUDACORE_STORM_SEED", std::random_device{}()));
    const std::vector<Op> ops = chosen_ops();
    const test::TemporaryCacheFolder cache;  // the workers' cache folder, the bundle's folder in it
    const test::TempDir work_root;
    const fs::path work = work_root.path() / "work";
    make_work_folder(work);
    const fs::path bundle_folder = test::storm_bundle().folder();  // there for the storm at once
    make_attack_copies(bundle_folder, work / "attack");

    Storm storm(work, bundle_folder, ops, seed, pause_ms);
    std::jthread storm_thread([&](std::stop_token stop) { storm.run(stop); });
    const std::vector<Worker> workers =
        compile_through_the_storm(work, seconds, at_once, seed + 1, storm_thread.get_stop_source());
    storm_thread.join();  // the log is complete
    if (const char* log = std::getenv("CUDACORE_STORM_LOG"); log && *log) write_log(log, storm);

    Tally tally;
    for (const Worker& worker : workers) take_output(worker, storm, tally);
    const long wrong_final = check_final(work, storm, tally);
    const StormCounts& counts = storm.counts();
    std::printf("file storm (seed %u, %s): %zu processes (%ld at once), %ld compiles (%ld from the "
                "cache, %ld not cached), %ld file changes, %ld swaps, %ld bundle folder changes, "
                "%ld refused; wrong results: %ld during the storm (%ld from the cache, %ld compiled; "
                "%ld with an include value never held meanwhile, %ld with another bundle value), "
                "%ld after it; %ld failed, %ld workers died\n",
                seed, op_list(ops).c_str(), workers.size(), at_once, tally.compiles, tally.from_cache,
                tally.not_cached, counts.changes, counts.swaps, counts.bundle_changes, counts.refused,
                tally.wrong_from_cache + tally.wrong_compiled, tally.wrong_from_cache,
                tally.wrong_compiled, tally.wrong_include, tally.wrong_bundle, wrong_final,
                tally.failures, tally.crashes);
    for (const auto& [why, times] : tally.not_cached_why) std::printf("  not cached %ld times: %s\n", times, why.c_str());
    std::fflush(stdout);
    EXPECT_EQ(tally.wrong_from_cache + tally.wrong_compiled, 0);
    EXPECT_EQ(wrong_final, 0);
    EXPECT_EQ(tally.failures, 0);
    EXPECT_EQ(tally.crashes, 0);
    EXPECT_GT(tally.compiles, 0);
    EXPECT_GT(counts.changes + counts.bundle_changes, 0);
    if (HasFailure())
        std::printf("%s%s", tally.wrong_lines.str().c_str(), tally.failure_lines.str().c_str());
}

}  // namespace
