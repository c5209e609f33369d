// run_steps (support/parallel_steps.hpp): steps in order, the lowest failing step among those
// that ran, and, with a delay, short work on the calling thread alone while long work spreads.
#include "support/parallel_steps.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace {

using cudacore::detail::run_steps;
using namespace std::chrono_literals;

// Which thread ran each step, and how many times each ran.
struct Record {
    std::mutex mutex;
    std::vector<std::thread::id> by;
    std::vector<int> runs;

    explicit Record(std::size_t count) : by(count), runs(count, 0) {}
    void ran(std::size_t i) {
        std::lock_guard lock(mutex);
        by[i] = std::this_thread::get_id();
        ++runs[i];
    }
    std::set<std::thread::id> threads() const { return {by.begin(), by.end()}; }
};

TEST(ParallelSteps, ShortStepsBeforeTheDelayRunOnTheCallingThreadAlone) {
    Record record(6);
    run_steps(6, 4, 10s, [&](std::size_t i) {
        record.ran(i);
        return true;
    });
    EXPECT_EQ(record.runs, std::vector<int>(6, 1));
    EXPECT_EQ(record.threads(), std::set<std::thread::id>{std::this_thread::get_id()});
}

TEST(ParallelSteps, ShortStepsReturnWithoutWaitingForTheDelay) {
    const auto start = std::chrono::steady_clock::now();
    run_steps(4, 4, 30s, [](std::size_t) { return true; });
    EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);  // the watcher is woken, not timed out
}

TEST(ParallelSteps, LongStepsSpreadOnceTheDelayHasPassed) {
    Record record(8);
    run_steps(8, 4, 1ms, [&](std::size_t i) {
        record.ran(i);
        std::this_thread::sleep_for(50ms);
        return true;
    });
    EXPECT_EQ(record.runs, std::vector<int>(8, 1));
    EXPECT_GT(record.threads().size(), 1u);
    EXPECT_EQ(record.by[0], std::this_thread::get_id());  // the calling thread starts at once
}

TEST(ParallelSteps, AFailureStopsLaterStepsWithAndWithoutDelay) {
    for (const std::chrono::nanoseconds delay : {std::chrono::nanoseconds(0), std::chrono::nanoseconds(1ms),
                                                 std::chrono::nanoseconds(10s)}) {
        Record record(20);
        run_steps(20, 3, delay, [&](std::size_t i) {
            record.ran(i);
            if (i == 4) return false;  // fails at once, while the other workers are in a step
            std::this_thread::sleep_for(20ms);
            return true;
        });
        for (std::size_t i = 0; i <= 4; ++i) EXPECT_EQ(record.runs[i], 1) << "step " << i;
        int later = 0;
        for (std::size_t i = 5; i < 20; ++i) {
            EXPECT_LE(record.runs[i], 1) << "step " << i;
            later += record.runs[i];
        }
        if (delay > 1s)
            EXPECT_EQ(later, 0) << "the calling thread alone stops at its own failure";
        else
            EXPECT_LT(later, 15) << "steps not started when step 4 failed are skipped";
    }
}

TEST(ParallelSteps, NoStepsAndOneWorker) {
    int calls = 0;
    run_steps(0, 4, 1ms, [&](std::size_t) { return ++calls, true; });
    EXPECT_EQ(calls, 0);
    Record record(3);
    run_steps(3, 1, 1ms, [&](std::size_t i) {
        record.ran(i);
        std::this_thread::sleep_for(5ms);
        return true;
    });
    EXPECT_EQ(record.threads(), std::set<std::thread::id>{std::this_thread::get_id()});
}

}  // namespace
