// The driver's own words in a DriverError (errors/driver_log.hpp), against a stand-in driver
// table whose failing entry points log through the callback the loader registers, on the calling
// thread, as the driver does. No GPU and no driver are needed.
#include "test_support.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/warnings.hpp"
#include "errors/driver_log.hpp"
#include "errors/release_report.hpp"
#include "loader/driver_api.hpp"
#include "runtime/release/reset_tolerance.hpp"

#include <string>
#include <thread>
#include <vector>

namespace {

using namespace cudacore;
using namespace cudacore::detail;

// What the stand-in driver logs (error level) before its cuMemAlloc fails, on the calling thread.
thread_local std::vector<std::string> lines_to_log;

void log_line(const std::string& line, CUlogLevel level = CU_LOG_LEVEL_ERROR) {
    std::string message = line + "\n";  // the driver's messages may end with a newline
    driver_log_callback(nullptr, level, message.data(), message.size());
}

CUresult failing_mem_alloc(CUdeviceptr*, size_t) {
    for (const auto& line : lines_to_log) log_line(line);
    return CUDA_ERROR_INVALID_VALUE;
}

CUresult succeeding_mem_alloc(CUdeviceptr* out, size_t) {
    *out = 0x1000;
    return CUDA_SUCCESS;
}

// A driver with error logs (its callback registered) and one without (before CUDA 12.9): both
// fail cuMemAlloc; only the first one's failing call logs.
DriverApi stand_in_driver(bool has_logs) {
    DriverApi api;
    api.cuMemAlloc = failing_mem_alloc;
    if (has_logs)
        api.cuLogsRegisterCallback = [](CUlogsCallback, void*, CUlogsCallbackHandle*) {
            return CUDA_SUCCESS;
        };
    return api;
}

// The DriverError a failing stand-in cuMemAlloc gives through the loader's check.
DriverError failed_alloc(const DriverApi& api, std::vector<std::string> lines) {
    lines_to_log = api.cuLogsRegisterCallback ? std::move(lines) : std::vector<std::string>{};
    CUdeviceptr pointer = 0;
    try {
        check(api.cuMemAlloc(&pointer, 64), "cuMemAlloc", "64 bytes");
    } catch (const DriverError& error) {
        return error;
    }
    ADD_FAILURE() << "check threw nothing";
    return DriverError(CUDA_SUCCESS, "", "");
}

std::string todays_message() { return DriverError(CUDA_ERROR_INVALID_VALUE, "cuMemAlloc", "64 bytes").what(); }

TEST(DriverLog, TheMessageQuotesTheLinesTheDriverLoggedForTheCall) {
    const DriverApi api = stand_in_driver(true);
    const DriverError error =
        failed_alloc(api, {"size 64 is not a multiple of the granularity", "Returning 1 from cuMemAlloc"});
    EXPECT_EQ(error.driver_log(), (std::vector<std::string>{"size 64 is not a multiple of the granularity",
                                                            "Returning 1 from cuMemAlloc"}));
    EXPECT_EQ(std::string(error.what()),
              todays_message() +
                  "; driver log: size 64 is not a multiple of the granularity | Returning 1 from cuMemAlloc");
    EXPECT_EQ(error.call(), "cuMemAlloc");
    EXPECT_EQ(error.object(), "64 bytes");
    EXPECT_EQ(error.status(), CUDA_ERROR_INVALID_VALUE);
}

TEST(DriverLog, AnEarlierFailuresLinesDoNotReachALaterError) {
    const DriverApi api = stand_in_driver(true);
    EXPECT_EQ(failed_alloc(api, {"first failure"}).driver_log(), std::vector<std::string>{"first failure"});
    const DriverError second = failed_alloc(api, {});
    EXPECT_TRUE(second.driver_log().empty());
    EXPECT_EQ(std::string(second.what()), todays_message());
    EXPECT_EQ(failed_alloc(api, {"third failure"}).driver_log(), std::vector<std::string>{"third failure"});
}

TEST(DriverLog, AReleaseEndingWithAShutdownStatusLeavesNoLinesBehind) {
    const DriverApi api = stand_in_driver(true);
    log_line("context is being destroyed");
    check_release(CUDA_ERROR_DEINITIALIZED, "cuStreamDestroy", [] { return std::string("stream"); });
    EXPECT_TRUE(failed_alloc(api, {}).driver_log().empty());
}

TEST(DriverLog, WarningsOfSuccessfulCallsDoNotReachALaterError) {
    const DriverApi api = stand_in_driver(true);
    log_line("a deprecated flag was given", CU_LOG_LEVEL_WARNING);
    EXPECT_TRUE(failed_alloc(api, {}).driver_log().empty());
}

TEST(DriverLog, AnotherThreadsLinesStayOnThatThread) {
    const DriverApi api = stand_in_driver(true);
    std::vector<std::string> other_log;
    std::thread other([&] {
        log_line("left behind on the other thread");
        other_log = failed_alloc(api, {"the other thread's failure"}).driver_log();
        log_line("logged after the other thread's error");  // never read: must not travel
    });
    other.join();
    EXPECT_EQ(other_log, (std::vector<std::string>{"left behind on the other thread",
                                                   "the other thread's failure"}));
    EXPECT_EQ(failed_alloc(api, {"this thread's failure"}).driver_log(),
              std::vector<std::string>{"this thread's failure"});
}

TEST(DriverLog, ThreadsFailingAtOnceEachGetTheirOwnLines) {
    const DriverApi api = stand_in_driver(true);
    constexpr int kThreads = 4;
    std::vector<int> wrong(kThreads, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 200; ++i) {
                const std::string line = "thread " + std::to_string(t) + " call " + std::to_string(i);
                if (failed_alloc(api, {line}).driver_log() != std::vector<std::string>{line}) ++wrong[t];
            }
        });
    }
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(wrong, std::vector<int>(kThreads, 0));
}

TEST(DriverLog, ADriverWithoutErrorLogsGivesTodaysMessage) {
    const DriverApi api = stand_in_driver(false);
    ASSERT_EQ(api.cuLogsRegisterCallback, nullptr);
    const DriverError error = failed_alloc(api, {"never logged"});
    EXPECT_TRUE(error.driver_log().empty());
    EXPECT_EQ(std::string(error.what()), todays_message());
    EXPECT_EQ(std::string(error.what()),
              "cuMemAlloc failed: CUDA_ERROR_INVALID_VALUE (1): " +
                  driver_status_text(CUDA_ERROR_INVALID_VALUE) + " [64 bytes]");
}

TEST(DriverLog, AnUnreportedFailuresGroupStaysOutOfTheNextFailure) {
    const DriverApi api = stand_in_driver(true);
    // A probe whose failure is an answer, never thrown: its lines end with its return line.
    log_line("paramIndex 3 outside of kernel parameter count 3");
    log_line("Returning 1 (CUDA_ERROR_INVALID_VALUE) from cuKernelGetParamInfo");
    EXPECT_EQ(failed_alloc(api, {"size 64 is not a multiple of the granularity",
                                 "Returning 1 (CUDA_ERROR_INVALID_VALUE) from cuMemAlloc_v2"})
                  .driver_log(),
              (std::vector<std::string>{"size 64 is not a multiple of the granularity",
                                        "Returning 1 (CUDA_ERROR_INVALID_VALUE) from cuMemAlloc_v2"}));
}

TEST(DriverLog, AnErrorBuiltWithoutADriverCallTakesNoEarlierLines) {
    log_line("paramIndex 3 outside of kernel parameter count 3");
    log_line("Returning 1 (CUDA_ERROR_INVALID_VALUE) from cuKernelGetParamInfo");
    try {
        throw_driver_error(CUDA_ERROR_NO_BINARY_FOR_GPU, "cuLibraryLoadData", "fatbin without sm_90");
    } catch (const DriverError& error) {
        EXPECT_TRUE(error.driver_log().empty()) << error.what();
    }
    EXPECT_TRUE(take_driver_log().empty());  // and the ring was emptied
}

TEST(DriverLog, LinesAfterTheLastReturnLineAreKeptAndAnEntryPointIsMatchedWhole) {
    log_line("Returning 1 (CUDA_ERROR_INVALID_VALUE) from cuKernelGetParamInfo");
    log_line("a line with no return line after it");
    EXPECT_EQ(take_driver_log("cuMemAlloc"), std::vector<std::string>{"a line with no return line after it"});
    // "cuMemAllocHost" is not "cuMemAlloc" (nor a version of it): another call's group.
    log_line("Returning 2 (CUDA_ERROR_OUT_OF_MEMORY) from cuMemAllocHost_v2");
    EXPECT_TRUE(take_driver_log("cuMemAlloc").empty());
    log_line("Returning 2 (CUDA_ERROR_OUT_OF_MEMORY) from cuMemAllocHost_v2");
    EXPECT_EQ(take_driver_log("cuMemAllocHost"),
              std::vector<std::string>{"Returning 2 (CUDA_ERROR_OUT_OF_MEMORY) from cuMemAllocHost_v2"});
    // No call named: every line, as before.
    log_line("one");
    log_line("Returning 1 (CUDA_ERROR_INVALID_VALUE) from cuKernelGetParamInfo");
    EXPECT_EQ(take_driver_log().size(), 2u);
}

TEST(DriverLog, ASuccessfulCallLeavesTheLogAlone) {
    DriverApi api = stand_in_driver(true);
    api.cuMemAlloc = succeeding_mem_alloc;
    log_line("pending");
    CUdeviceptr pointer = 0;
    check(api.cuMemAlloc(&pointer, 64), "cuMemAlloc", "64 bytes");
    EXPECT_EQ(take_driver_log(), std::vector<std::string>{"pending"});
}

TEST(DriverLog, TheDescriptionIsBuiltAfterTheLogIsTaken) {
    const DriverApi api = stand_in_driver(true);
    lines_to_log = {"the call's own line"};
    CUdeviceptr pointer = 0;
    try {
        check(api.cuMemAlloc(&pointer, 64), "cuMemAlloc", [] {
            log_line("logged while describing the object");  // a driver call made by describe()
            return std::string("described");
        });
        FAIL() << "check threw nothing";
    } catch (const DriverError& error) {
        EXPECT_EQ(error.driver_log(), std::vector<std::string>{"the call's own line"});
        EXPECT_EQ(error.object(), "described");
    }
    discard_driver_log();
}

TEST(DriverLog, AFullRingKeepsTheNewestLinesAndSaysHowManyWentAndCutsLongLines) {
    std::vector<std::string> lines;
    for (std::size_t i = 0; i < kDriverLogLines + 2; ++i) lines.push_back("line " + std::to_string(i));
    lines.back() = std::string(kDriverLogLineBytes + 100, 'x');
    const DriverError error = failed_alloc(stand_in_driver(true), lines);
    ASSERT_EQ(error.driver_log().size(), kDriverLogLines + 1);
    EXPECT_EQ(error.driver_log().front(), "(2 earlier lines dropped)");
    EXPECT_EQ(error.driver_log()[1], "line 2");
    EXPECT_EQ(error.driver_log().back(), std::string(kDriverLogLineBytes, 'x') + "...");
}

TEST(DriverLog, AFailedReleaseWarnsWithTheLinesAndCloseThrowsThem) {
    std::vector<std::string> warnings;
    const WarningHandler previous =
        set_warning_handler([&](const Warning& warning) { warnings.push_back(warning.message); });
    log_line("stream 0x1 has pending work");
    report_release_failure(CUDA_ERROR_INVALID_HANDLE, "cuStreamDestroy", "stream 0x1");
    set_warning_handler(previous);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find(" while releasing; driver log: stream 0x1 has pending work"),
              std::string::npos)
        << warnings[0];

    ReleaseErrorCapture capture;
    log_line("the pool is in use");
    report_release_failure(CUDA_ERROR_INVALID_VALUE, "cuMemPoolDestroy", "pool");
    try {
        capture.rethrow();
        FAIL() << "rethrow() threw nothing";
    } catch (const DriverError& error) {
        EXPECT_EQ(error.driver_log(), std::vector<std::string>{"the pool is in use"});
        EXPECT_NE(std::string(error.what()).find("; driver log: the pool is in use"), std::string::npos);
    }
}

}  // namespace
