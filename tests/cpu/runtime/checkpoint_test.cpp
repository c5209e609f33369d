// Checkpoint and restore without a GPU: argument checks (made before the driver is asked), state
// names, and a clear NoDriverError from every call without a driver.
#include "cudacore/checkpoint.hpp"
#include "test_support.hpp"

#include <unistd.h>

#include <chrono>
#include <climits>

namespace {

using cudacore::checkpoint::GpuRemap;
using cudacore::checkpoint::Process;
using cudacore::checkpoint::ProcessState;
using cudacore::test::expect_invalid;
using namespace std::chrono_literals;

TEST(Checkpoint, ProcessIdMustBePositive) {
    expect_invalid([] { Process process(0); }, {"pid 0", "positive"});
    expect_invalid([] { Process process(-17); }, {"pid -17", "positive"});
    EXPECT_EQ(Process(1).pid(), 1);
    EXPECT_EQ(Process::current().pid(), static_cast<int>(::getpid()));
}

TEST(Checkpoint, LockTimeoutOutOfRangeIsRefusedBeforeTheDriver) {
    // Refused before any driver call: these hold with or without a driver.
    const Process other(1);
    expect_invalid([&] { other.lock(0ms); }, {"timeout of 0 ms", "process 1", "lock()"});
    expect_invalid([&] { other.lock(-5ms); }, {"timeout of -5 ms", "out of range"});
    expect_invalid([&] { other.lock(std::chrono::milliseconds(1LL + UINT_MAX)); },
                   {"timeout of 4294967296 ms", "4294967295"});
}

TEST(Checkpoint, RestoreRemapNamingAGpuTwiceIsRefusedBeforeTheDriver) {
    const Process other(1);
    GpuRemap a;
    a.from[0] = 1;
    a.to[0] = 2;
    GpuRemap b = a;
    b.to[0] = 3;  // same source twice
    expect_invalid([&] { other.restore({a, b}); }, {"names one GPU twice", "process 1"});
    GpuRemap c = a;
    c.from[0] = 4;  // same target twice
    expect_invalid([&] { other.restore({a, c}); }, {"names one GPU twice"});
}

TEST(Checkpoint, StateNames) {
    EXPECT_EQ(to_string(ProcessState::running), "running");
    EXPECT_EQ(to_string(ProcessState::locked), "locked");
    EXPECT_EQ(to_string(ProcessState::checkpointed), "checkpointed");
    EXPECT_EQ(to_string(ProcessState::failed), "failed");
    EXPECT_EQ(to_string(ProcessState::checkpointing), "checkpointing");
    EXPECT_EQ(to_string(ProcessState::restoring), "restoring");
    EXPECT_EQ(to_string(static_cast<ProcessState>(9)), "ProcessState(9)");
    // The numbers are the driver's.
    EXPECT_EQ(static_cast<int>(ProcessState::running), CU_PROCESS_STATE_RUNNING);
    EXPECT_EQ(static_cast<int>(ProcessState::locked), CU_PROCESS_STATE_LOCKED);
    EXPECT_EQ(static_cast<int>(ProcessState::checkpointed), CU_PROCESS_STATE_CHECKPOINTED);
    EXPECT_EQ(static_cast<int>(ProcessState::failed), CU_PROCESS_STATE_FAILED);
}

TEST(Checkpoint, EveryCallWithoutADriverThrowsNoDriverError) {
    auto result = cudacore::test::run_process(
        {cudacore::test::helper_path("checkpoint_no_driver_probe").string()},
        {{"CUDACORE_LIBCUDA_PATH", "/nonexistent/libcuda.so.1"}});
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    for (const char* entry :
         {"Process::state", "Process::restore_thread_id", "Process::lock", "Process::lock(timeout)",
          "Process::checkpoint", "Process::restore", "Process::unlock"}) {
        EXPECT_NE(result.out.find(std::string(entry) + ": NoDriverError"), std::string::npos)
            << entry << "\n" << result.out;
    }
    EXPECT_NE(result.out.find("CUDACORE_LIBCUDA_PATH"), std::string::npos) << result.out;
    EXPECT_EQ(result.out.find("UNEXPECTED"), std::string::npos) << result.out;
}

}  // namespace
