// ReleaseErrorCapture: what close() uses to report the errors of the release it makes, where a
// destructor only warns. A failure reported while a capture lives on this thread is kept (the
// first one) and thrown by rethrow(); other threads, and this one without a capture, warn.
#include "test_support.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/owning_handle.hpp"
#include "cudacore/warnings.hpp"
#include "errors/closed_object.hpp"
#include "errors/release_report.hpp"

#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace cudacore;

// Collects the warnings raised while it lives.
struct WarningLog {
    std::vector<std::string> messages;
    WarningHandler previous;
    WarningLog() {
        previous = set_warning_handler(
            [this](const Warning& warning) { messages.push_back(warning.message); });
    }
    ~WarningLog() { set_warning_handler(previous); }
};

TEST(ReleaseErrorCapture, KeepsTheFirstFailureAndThrowsItAsADriverError) {
    WarningLog log;
    detail::ReleaseErrorCapture capture;
    detail::report_release_failure(CUDA_ERROR_INVALID_HANDLE, "cuEventDestroy", "event 0x1 on device 0");
    detail::report_release_failure(CUDA_ERROR_INVALID_VALUE, "cuMemFree", "second");
    EXPECT_TRUE(log.messages.empty());
    try {
        capture.rethrow();
        FAIL() << "rethrow() threw nothing";
    } catch (const DriverError& error) {
        EXPECT_EQ(error.status(), CUDA_ERROR_INVALID_HANDLE);
        EXPECT_EQ(error.call(), "cuEventDestroy");
        EXPECT_EQ(error.object(), "event 0x1 on device 0");
    }
    EXPECT_NO_THROW(capture.rethrow());  // thrown once
}

TEST(ReleaseErrorCapture, OtherThreadsAndNoCaptureStillWarn) {
    WarningLog log;
    {
        detail::ReleaseErrorCapture capture;
        std::thread([] {
            detail::report_release_failure(CUDA_ERROR_INVALID_HANDLE, "cuGraphDestroy", "elsewhere");
        }).join();
        EXPECT_NO_THROW(capture.rethrow());
    }
    detail::report_release_failure(CUDA_ERROR_INVALID_HANDLE, "cuArrayDestroy", "after");
    ASSERT_EQ(log.messages.size(), 2u);
    EXPECT_NE(log.messages[0].find("cuGraphDestroy failed"), std::string::npos) << log.messages[0];
    EXPECT_NE(log.messages[1].find("cuArrayDestroy failed"), std::string::npos) << log.messages[1];
}

// A box whose release fails, as a destructor reports it.
struct FailingBox {
    ~FailingBox() { detail::report_release_failure(CUDA_ERROR_ILLEGAL_ADDRESS, "cuTestRelease", "box"); }
};

TEST(ReleaseShare, ThrowsTheLastSharesReleaseErrorAndLetsGoEitherWay) {
    WarningLog log;
    auto share = std::make_shared<FailingBox>();
    auto other = share;
    detail::release_share(share);  // not the last: nothing released, nothing thrown
    EXPECT_EQ(share, nullptr);
    EXPECT_THROW(detail::release_share(other), DriverError);
    EXPECT_EQ(other, nullptr);
    EXPECT_TRUE(log.messages.empty());
}

TEST(ClosedObjectErrors, NameTheCallTheObjectAndTheType) {
    try {
        detail::throw_closed_object("Event::sync", "event 0x1 on device 0", "Event");
        FAIL() << "nothing thrown";
    } catch (const InvalidArgumentError& error) {
        EXPECT_STREQ(error.what(),
                     "Event::sync: event 0x1 on device 0 is closed (Event::close was called on this object)");
    }
    try {
        detail::throw_moved_from("Graph::launch", "Graph", "graph");
        FAIL() << "nothing thrown";
    } catch (const InvalidArgumentError& error) {
        EXPECT_STREQ(error.what(), "Graph::launch: the Graph object was moved from (it holds no graph)");
    }
}

// The owning objects' (OwningHandle): closed through any copy, or empty after a move or reset().
TEST(ClosedObjectErrors, OwningObjectsSayACopyMayHaveClosedThem) {
    try {
        detail::throw_closed_object_error("Graph::node_count", "graph 0x1 on device 0", "Graph");
        FAIL() << "nothing thrown";
    } catch (const InvalidArgumentError& error) {
        EXPECT_STREQ(error.what(), "Graph::node_count: graph 0x1 on device 0 is closed "
                                   "(Graph::close was called on it or on a copy)");
    }
    try {
        detail::throw_moved_from_error("GraphExec::launch", "GraphExec", "executable graph");
        FAIL() << "nothing thrown";
    } catch (const InvalidArgumentError& error) {
        EXPECT_STREQ(error.what(), "GraphExec::launch: the GraphExec object is empty (moved from "
                                   "or reset: it holds no executable graph)");
    }
}

}  // namespace
