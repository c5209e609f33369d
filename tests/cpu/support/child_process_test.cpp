// run_child_process (support/child_process.hpp): a child that exits while a descendant holds its
// outputs open is not waited for beyond a short drain, and a reply past its bound kills the child
// and is dropped, never kept whole.
#include "support/child_process.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace {

using cudacore::detail::ChildProcessOptions;
using cudacore::detail::ChildProcessResult;
using cudacore::detail::run_child_process;

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(ChildProcess, AnExitedChildIsNotWaitedForWhileADescendantHoldsItsOutputs) {
    for (const bool reply : {false, true}) {
        const auto start = std::chrono::steady_clock::now();
        const ChildProcessResult ended = run_child_process(
            "/bin/sh", {"-c", "echo before; (sleep 30) & exit 3"},
            ChildProcessOptions{.timeout = std::chrono::seconds(60), .reply_channel = reply});
        EXPECT_LT(seconds_since(start), 10.0) << "waited for the descendant's outputs";
        EXPECT_FALSE(ended.timed_out);
        EXPECT_EQ(ended.exit_code, 3);
        EXPECT_EQ(ended.out, "before\n");
        EXPECT_EQ(ended.how_it_ended(), "exited with status 3");
    }
}

TEST(ChildProcess, AChildThatEndsItsOutputsIsReadWhole) {
    const ChildProcessResult ended = run_child_process(
        "/bin/sh", {"-c", "head -c 3000000 /dev/zero | tr '\\0' x >&3; echo done; exit 0"},
        ChildProcessOptions{.timeout = std::chrono::seconds(60), .reply_channel = true});
    EXPECT_EQ(ended.exit_code, 0);
    EXPECT_EQ(ended.reply, std::string(3000000, 'x'));
    EXPECT_EQ(ended.out, "done\n");
}

TEST(ChildProcess, AReplyPastItsBoundKillsTheChildAndIsDropped) {
    const auto start = std::chrono::steady_clock::now();
    const ChildProcessResult ended = run_child_process(
        "/bin/sh", {"-c", "cat /dev/zero >&3"},
        ChildProcessOptions{.timeout = std::chrono::seconds(60), .reply_channel = true, .max_reply = 1 << 20});
    EXPECT_LT(seconds_since(start), 30.0);
    EXPECT_TRUE(ended.reply_too_long);
    EXPECT_FALSE(ended.timed_out);
    EXPECT_TRUE(ended.reply.empty());
    EXPECT_EQ(ended.how_it_ended(), "killed: its reply passed 1048576 bytes");
    // Exactly the bound is a reply.
    const ChildProcessResult at_bound = run_child_process(
        "/bin/sh", {"-c", "head -c 1048576 /dev/zero >&3"},
        ChildProcessOptions{.timeout = std::chrono::seconds(60), .reply_channel = true, .max_reply = 1 << 20});
    EXPECT_FALSE(at_bound.reply_too_long);
    EXPECT_EQ(at_bound.reply.size(), 1u << 20);
}

}  // namespace
