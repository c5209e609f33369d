// The warning handler: silent by default, called for a release that fails for a reason other
// than shutdown (from a Buffer's destructor, which still never throws), not for shutdown errors.
#include "test_support.hpp"

#include "support/box_access.hpp"
#include "cudacore/buffer.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/memory_resource.hpp"
#include "cudacore/warnings.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace {

using namespace cudacore;

// Hands out fake addresses (never dereferenced) and fails every free with `status`.
class FailingResource final : public MemoryResource {
public:
    explicit FailingResource(CUresult status) : status_(status) {}
    bool is_device_accessible() const noexcept override { return true; }
    bool is_host_accessible() const noexcept override { return false; }
    int device_ordinal() const noexcept override { return 0; }
    std::string description() const override { return "failing test resource"; }

protected:
    CUdeviceptr do_allocate(std::size_t, CUstream) override { return 0x1000; }
    void do_deallocate(CUdeviceptr, std::size_t, CUstream) override {
        throw DriverError(status_, "cuMemFreeAsync", "test allocation");
    }

private:
    CUresult status_;
};

void allocate_and_drop(CUresult status) {
    auto resource = std::make_shared<FailingResource>(status);
    Buffer buffer = resource->allocate(64, detail::BoxAccess::empty<Stream>());
    EXPECT_TRUE(buffer.owns_memory());
}  // the Buffer's destructor frees, and the free fails

TEST(Warnings, DefaultIsSilentAndNothingThrows) {
    EXPECT_NO_THROW(allocate_and_drop(CUDA_ERROR_INVALID_VALUE));
}

TEST(Warnings, FailedReleaseReachesTheHandler) {
    test::WarningLog collect;
    allocate_and_drop(CUDA_ERROR_INVALID_VALUE);
    ASSERT_EQ(collect.seen.size(), 1u);
    EXPECT_EQ(collect.seen[0].kind, WarningKind::release_failed);
    const std::string& message = collect.seen[0].message;
    EXPECT_NE(message.find("cuMemFreeAsync"), std::string::npos) << message;
    EXPECT_NE(message.find("CUDA_ERROR_INVALID_VALUE"), std::string::npos) << message;
    EXPECT_NE(message.find("test allocation"), std::string::npos) << message;
}

TEST(Warnings, ShutdownErrorsAreNotReported) {
    test::WarningLog collect;
    allocate_and_drop(CUDA_ERROR_DEINITIALIZED);
    allocate_and_drop(CUDA_ERROR_CONTEXT_IS_DESTROYED);
    EXPECT_TRUE(collect.seen.empty());
}

TEST(Warnings, AThrowingHandlerIsContainedAndHandlersCanBeRestored) {
    WarningHandler previous = set_warning_handler([](const Warning&) { throw 42; });
    EXPECT_NO_THROW(allocate_and_drop(CUDA_ERROR_INVALID_VALUE));
    EXPECT_NO_THROW(warn(WarningKind::not_cached, "direct"));
    set_warning_handler(previous);
}

}  // namespace
