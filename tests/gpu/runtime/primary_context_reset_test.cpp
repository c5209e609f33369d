// A primary context's reset on a real GPU (its own executable: a reset destroys what the process
// made in the context): refused, naming what holds it, while cudacore objects of the context
// live (a stream, a created context on the device, a Context value); done once they are gone,
// with the flags set before kept and the device usable again through a new context; the default
// memory resource follows the new context.
#include "test_support.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/context.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/primary_context.hpp"
#include "cudacore/stream.hpp"
#include "loader/driver_api.hpp"

#include <optional>
#include <vector>

namespace {

using namespace cudacore;

unsigned long long id_of(const Context& context) {
    unsigned long long id = 0;
    EXPECT_EQ(detail::driver().cuCtxGetId(context.handle(), &id), CUDA_SUCCESS);
    return id;
}

TEST(PrimaryContextResetGpu, RefusedWhileObjectsLiveThenDone) {
    CUDACORE_REQUIRE_GPU();
    const Device device(0);
    const unsigned long long first_id = id_of(device.context());
    {
        std::optional<Stream> stream = device.create_stream();
        test::expect_invalid([&] { reset_primary_context(device); },
                             {"reset_primary_context", "refused", "primary context of device 0",
                              "cudacore object", "drop them first"});
        std::optional<Context> mine = Context::create(device);
        test::expect_invalid([&] { reset_primary_context(device); },
                             {"cudacore objects", "1 context created on the device"});
        mine.reset();
        std::optional<Context> primary = device.context();
        test::expect_invalid([&] { reset_primary_context(device); }, {"refused", "Context values"});
        primary.reset();
        stream.reset();
    }
    // The default memory resource used and its buffers gone: it does not count.
    {
        const Stream stream = device.create_stream();
        Buffer buffer = device.allocate(1 << 20, stream);
        buffer.fill_byte(1, stream);
        stream.sync();
    }
    ASSERT_NO_THROW(reset_primary_context(device));
    // The driver's reset puts the flags back to their defaults too: set them while the context is
    // inactive, and the next use retains a new context with them.
    set_primary_context_options(device, {.scheduling = ContextScheduling::blocking_sync});
    const Context after = device.context();
    EXPECT_NE(id_of(after), first_id);
    EXPECT_EQ(primary_context_state(device).options.scheduling, ContextScheduling::blocking_sync);
    const Stream stream = device.create_stream();
    Buffer buffer = device.allocate(1 << 20, stream);  // the default resource follows
    buffer.fill_byte(7, stream);
    std::vector<unsigned char> host(1 << 20);
    buffer.copy_to(host.data(), host.size(), stream);
    stream.sync();
    EXPECT_EQ(host.front(), 7);
    EXPECT_EQ(host.back(), 7);
    set_primary_context_options(device, {});
}

TEST(PrimaryContextResetGpu, ANeverUsedDeviceResetsWithoutRetaining) {
    CUDACORE_REQUIRE_GPU();
    if (Device::count() < 2) GTEST_SKIP() << "needs a second GPU that nothing used yet";
    const Device device(1);
    EXPECT_NO_THROW(reset_primary_context(device));
}

}  // namespace
