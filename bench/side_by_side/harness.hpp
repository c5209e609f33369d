// The side-by-side program's harness, shared by every area: how one operation is timed on each
// system (warm-up, then repetitions alternating between the systems and their order, the median
// reported) and the JSON lines bench/side_by_side.py reads.
//
//   {"operation": OP, "system": "raw"|"cudacore", "median_ns": N, "repetitions": R, "note": ...}
//   {"operation": OP, "system": ..., "skipped": REASON}             could not be timed here
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <set>
#include <string>
#include <vector>

namespace cudacore::bench::side_by_side {

using json = nlohmann::json;

// The nanoseconds `work` takes, once.
template <class Work>
double nanoseconds(Work&& work) {
    const auto start = std::chrono::steady_clock::now();
    work();
    return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
}

// Writes one JSON line to stdout, flushed (the script may read a run cut short).
void emit(const json& line);

void emit_skipped(const std::string& operation, const std::string& system, const std::string& why);

// One repetition of one system: returns the nanoseconds per operation of its timed region
// (setup and teardown around that region stay untimed).
using Repetition = std::function<double()>;

struct Side {
    Side(std::string system_, Repetition repetition_, std::string note_ = {})
        : system(std::move(system_)), repetition(std::move(repetition_)), note(std::move(note_)) {}
    std::string system;
    Repetition repetition;  // empty: the system does not offer the operation
    std::string note;       // what exactly is timed, when the name does not say it
};

// Warm-up and timed repetitions of one operation (per side).
struct Plan {
    int warmup = 3;
    int repetitions = 100;
};

class Runner {
public:
    // `quick`: a few repetitions only (smoke tests); `only`: the operations to run (empty: all).
    Runner(bool quick, std::set<std::string> only) : quick_(quick), only_(std::move(only)) {}

    bool wanted(const std::string& operation) const;

    // Warm-up, then repetitions alternating between the sides (and their order), then one line
    // per side. A side that throws is reported skipped with the error and the others go on.
    void compare(const std::string& operation, Plan plan, std::vector<Side> sides);

    // Reports `operation` skipped for each of `systems`, with the reason.
    void skip(const std::string& operation, const std::vector<std::string>& systems,
              const std::string& why);

private:
    bool quick_;
    std::set<std::string> only_;
};

}  // namespace cudacore::bench::side_by_side
