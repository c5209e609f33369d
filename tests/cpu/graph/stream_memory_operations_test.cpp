// Stream memory operations without a GPU: the batch helpers fill in what they say, the wait
// conditions are the driver's flags and have names.
#include "test_support.hpp"

#include "cudacore/stream_memory_operations.hpp"

#include <cuda.h>

namespace {

using namespace cudacore;

TEST(StreamMemoryOperationsCpu, BatchHelpersFillInTheOperation) {
    const ValueAddress address{.pointer = 0x1000};
    const MemoryOperation wait = wait_value64_operation(
        address, 0x1'0000'0001ull, {.condition = WaitCondition::bitwise_and, .flush_remote_writes = true});
    EXPECT_EQ(wait.kind, MemoryOperation::Kind::wait_value64);
    EXPECT_EQ(wait.address.pointer, 0x1000u);
    EXPECT_FALSE(wait.address.buffer);
    EXPECT_EQ(wait.value, 0x1'0000'0001ull);
    EXPECT_EQ(wait.wait.condition, WaitCondition::bitwise_and);
    EXPECT_TRUE(wait.wait.flush_remote_writes);

    const MemoryOperation write = write_value32_operation(address, 7, {.memory_barrier = false});
    EXPECT_EQ(write.kind, MemoryOperation::Kind::write_value32);
    EXPECT_EQ(write.value, 7u);
    EXPECT_FALSE(write.write.memory_barrier);
    EXPECT_EQ(wait_value32_operation(address, 1).wait.condition, WaitCondition::equal);
    EXPECT_TRUE(write_value64_operation(address, 1).write.memory_barrier);
}

TEST(StreamMemoryOperationsCpu, ConditionsAreTheDriverFlagsAndHaveNames) {
    EXPECT_EQ(static_cast<unsigned>(WaitCondition::greater_or_equal), CU_STREAM_WAIT_VALUE_GEQ);
    EXPECT_EQ(static_cast<unsigned>(WaitCondition::equal), CU_STREAM_WAIT_VALUE_EQ);
    EXPECT_EQ(static_cast<unsigned>(WaitCondition::bitwise_and), CU_STREAM_WAIT_VALUE_AND);
    EXPECT_EQ(static_cast<unsigned>(WaitCondition::bitwise_nor), CU_STREAM_WAIT_VALUE_NOR);
    EXPECT_EQ(to_string(WaitCondition::greater_or_equal), "greater_or_equal");
    EXPECT_EQ(to_string(WaitCondition::equal), "equal");
    EXPECT_EQ(to_string(WaitCondition::bitwise_and), "bitwise_and");
    EXPECT_EQ(to_string(WaitCondition::bitwise_nor), "bitwise_nor");
    EXPECT_EQ(to_string(static_cast<WaitCondition>(9)), "WaitCondition(9)");
}

}  // namespace
