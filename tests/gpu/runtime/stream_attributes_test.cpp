// Stream attributes on a real GPU (stream_attributes.hpp): the synchronization policy and the
// L2 access policy window set, read back and cleared, the priority read as an attribute, the
// attributes copied to another stream, and what is refused before the driver.
#include "test_support.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/context.hpp"
#include "cudacore/current_context_scope.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/stream_attributes.hpp"
#include "loader/driver_api.hpp"

#include <functional>
#include <optional>
#include <string>
#include <utility>

namespace {

using namespace cudacore;

std::string invalid_message(const std::function<void()>& call) {
    try {
        call();
    } catch (const InvalidArgumentError& e) {
        return e.what();
    }
    return "<no InvalidArgumentError>";
}

bool has_persisting_l2(const Device& device) {
    return device.attribute(CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE) > 0;
}

CUaccessPolicyWindow window_over(const Buffer& buffer, float hit_ratio) {
    CUaccessPolicyWindow window{};
    window.base_ptr = buffer.data();
    window.num_bytes = buffer.size();
    window.hitRatio = hit_ratio;
    window.hitProp = CU_ACCESS_PROPERTY_PERSISTING;
    window.missProp = CU_ACCESS_PROPERTY_STREAMING;
    return window;
}

TEST(StreamAttributesGpu, SynchronizationPolicyIsSetAndReadBack) {
    CUDACORE_REQUIRE_GPU();
    const Stream stream = Device(0).create_stream();
    for (SynchronizationPolicy policy :
         {SynchronizationPolicy::spin, SynchronizationPolicy::yield,
          SynchronizationPolicy::blocking_sync, SynchronizationPolicy::automatic}) {
        set_synchronization_policy(stream, policy);
        EXPECT_EQ(synchronization_policy(stream), policy) << to_string(policy);
        stream.sync();  // waits under the policy
    }
    const std::string bad =
        invalid_message([&] { set_synchronization_policy(stream, static_cast<SynchronizationPolicy>(99)); });
    EXPECT_NE(bad.find("99 is not a SynchronizationPolicy"), std::string::npos) << bad;
    // The value-first order of an earlier release still sets it (deprecated, forwarding).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    set_synchronization_policy(SynchronizationPolicy::yield, stream);
#pragma GCC diagnostic pop
    EXPECT_EQ(synchronization_policy(stream), SynchronizationPolicy::yield);
}

// A stream whose policy was never set reads back the policy its context's scheduling flag gives
// (the driver itself answers -1, no policy, for it), for each scheduling a created context can
// have.
TEST(StreamAttributesGpu, ANewStreamAnswersItsContextsScheduling) {
    CUDACORE_REQUIRE_GPU();
    const std::pair<ContextScheduling, SynchronizationPolicy> expected[] = {
        {ContextScheduling::automatic, SynchronizationPolicy::automatic},
        {ContextScheduling::spin, SynchronizationPolicy::spin},
        {ContextScheduling::yield, SynchronizationPolicy::yield},
        {ContextScheduling::blocking_sync, SynchronizationPolicy::blocking_sync},
    };
    for (const auto& [scheduling, policy] : expected) {
        SCOPED_TRACE(to_string(policy));
        const Context context = Context::create(Device(0), {.scheduling = scheduling});
        const Stream stream = context.create_stream();
        CUstreamAttrValue raw{};
        {
            const CurrentContextScope scope(context);
            ASSERT_EQ(detail::driver().cuStreamGetAttribute(
                          stream.handle(), CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY, &raw),
                      CUDA_SUCCESS);
        }
        // The driver answers -1 (no policy) for a stream whose policy was never set; should it
        // ever answer a policy, it must be the one the context gives.
        const int answered = static_cast<int>(raw.syncPolicy);
        if (answered != -1) {
            EXPECT_EQ(answered, static_cast<int>(policy)) << "the driver's own answer";
        }
        EXPECT_EQ(synchronization_policy(stream), policy);
        // A policy set on the stream wins over the context's.
        const SynchronizationPolicy other = policy == SynchronizationPolicy::spin
                                                ? SynchronizationPolicy::yield
                                                : SynchronizationPolicy::spin;
        set_synchronization_policy(stream, other);
        EXPECT_EQ(synchronization_policy(stream), other);
        stream.sync();
    }
}

TEST(StreamAttributesGpu, AccessPolicyWindowIsSetReadBackAndCleared) {
    CUDACORE_REQUIRE_GPU();
    const Device device(0);
    if (!has_persisting_l2(device)) GTEST_SKIP() << "device 0 has no persisting L2 cache";
    const Stream stream = device.create_stream();
    EXPECT_FALSE(access_policy_window(stream).has_value()) << "none on a new stream";
    Buffer data = device.allocate(1 << 20, stream);
    set_access_policy_window(stream, window_over(data, 0.5f));
    const std::optional<CUaccessPolicyWindow> read = access_policy_window(stream);
    ASSERT_TRUE(read.has_value());
    EXPECT_EQ(read->base_ptr, data.data());
    EXPECT_EQ(read->num_bytes, data.size());
    EXPECT_FLOAT_EQ(read->hitRatio, 0.5f);
    EXPECT_EQ(read->hitProp, CU_ACCESS_PROPERTY_PERSISTING);
    EXPECT_EQ(read->missProp, CU_ACCESS_PROPERTY_STREAMING);
    data.fill_byte(7, stream);  // work under the window
    stream.sync();
    clear_access_policy_window(stream);
    EXPECT_FALSE(access_policy_window(stream).has_value());
}

TEST(StreamAttributesGpu, BadWindowsAreRefusedWithTheReason) {
    CUDACORE_REQUIRE_GPU();
    const Device device(0);
    const Stream stream = device.create_stream();
    Buffer data = device.allocate(4096, stream);
    if (!has_persisting_l2(device)) {
        const std::string message =
            invalid_message([&] { set_access_policy_window(stream, window_over(data, 0.5f)); });
        EXPECT_NE(message.find("no persisting L2 cache"), std::string::npos) << message;
        return;
    }
    CUaccessPolicyWindow empty = window_over(data, 0.5f);
    empty.num_bytes = 0;
    EXPECT_NE(invalid_message([&] { set_access_policy_window(stream, empty); })
                  .find("clear_access_policy_window"),
              std::string::npos);
    CUaccessPolicyWindow ratio = window_over(data, 1.5f);
    EXPECT_NE(invalid_message([&] { set_access_policy_window(stream, ratio); }).find("hitRatio"),
              std::string::npos);
    CUaccessPolicyWindow huge = window_over(data, 0.5f);
    const int most = device.attribute(CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE);
    huge.num_bytes = static_cast<std::size_t>(most) + 1;
    const std::string message = invalid_message([&] { set_access_policy_window(stream, huge); });
    EXPECT_NE(message.find(std::to_string(most)), std::string::npos) << message;
    EXPECT_NE(message.find("stream 0x"), std::string::npos) << message;
}

TEST(StreamAttributesGpu, PriorityAttributeIsTheStreamsPriority) {
    CUDACORE_REQUIRE_GPU();
    const Device device(0);
    const Stream normal = device.create_stream();
    EXPECT_EQ(priority_attribute(normal), normal.priority());
    // -1 lies in every range of a device with priorities (0 down to -5 on the H100).
    std::optional<Stream> high;
    try {
        high.emplace(device.create_stream({.priority = -1}));
    } catch (const InvalidArgumentError& e) {
        GTEST_SKIP() << "no priority -1 here: " << e.what();
    }
    EXPECT_EQ(priority_attribute(*high), high->priority());
    EXPECT_EQ(priority_attribute(*high), -1);
}

TEST(StreamAttributesGpu, CopyAttributesCopiesPolicyAndWindow) {
    CUDACORE_REQUIRE_GPU();
    const Device device(0);
    const Stream source = device.create_stream();
    const Stream destination = device.create_stream();
    set_synchronization_policy(source, SynchronizationPolicy::blocking_sync);
    Buffer data = device.allocate(1 << 16, source);
    const bool window = has_persisting_l2(device);
    if (window) set_access_policy_window(source, window_over(data, 0.25f));
    copy_attributes(destination, source);
    EXPECT_EQ(synchronization_policy(destination), SynchronizationPolicy::blocking_sync);
    if (window) {
        const std::optional<CUaccessPolicyWindow> copied = access_policy_window(destination);
        ASSERT_TRUE(copied.has_value());
        EXPECT_EQ(copied->base_ptr, data.data());
        EXPECT_FLOAT_EQ(copied->hitRatio, 0.25f);
    }
    source.sync();
}

TEST(StreamAttributesGpu, StreamsOfTwoContextsAndClosedStreamsAreRefused) {
    CUDACORE_REQUIRE_GPU();
    const Device device(0);
    const Context created = Context::create(device);
    const Stream theirs = created.create_stream();
    Stream ours = device.create_stream();
    const std::string message = invalid_message([&] { copy_attributes(ours, theirs); });
    EXPECT_NE(message.find("different contexts"), std::string::npos) << message;
    ours.close();
    EXPECT_NE(invalid_message([&] { synchronization_policy(ours); }).find("closed"), std::string::npos);
    EXPECT_NE(invalid_message([&] { copy_attributes(theirs, ours); }).find("closed"), std::string::npos);
}

}  // namespace
