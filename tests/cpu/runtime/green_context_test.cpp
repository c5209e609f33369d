// Green contexts without a GPU: split options are refused by field before the driver is called,
// empty and already-split resources are refused, and with no driver the entry points throw
// NoDriverError.
#include "test_support.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/green_context.hpp"

#include <memory>

namespace {

using namespace cudacore;

// A resource as the driver describes a 132-SM compute 9.0 device (or a group of a split).
SmResource fake_sms(unsigned count, bool from_split = false) {
    auto data = std::make_shared<CUdevResource>();
    data->type = CU_DEV_RESOURCE_TYPE_SM;
    data->sm.smCount = count;
    data->sm.minSmPartitionSize = 8;
    data->sm.smCoscheduledAlignment = 8;
    return SmResource(std::move(data), 0, from_split);
}

std::string refusal(const SmResource& resource, const SmSplitOptions& options) {
    try {
        resource.split(options);
    } catch (const InvalidArgumentError& e) {
        return e.what();
    } catch (const std::exception& e) {
        return std::string("not an InvalidArgumentError: ") + e.what();
    }
    return "no error";
}

#define EXPECT_MENTIONS(message, text) \
    EXPECT_NE((message).find(text), std::string::npos) << "message: " << (message)

TEST(SmResource, ReportsTheDriversNumbers) {
    const SmResource sms = fake_sms(132);
    EXPECT_EQ(sms.sm_count(), 132u);
    EXPECT_EQ(sms.min_partition_size(), 8u);
    EXPECT_EQ(sms.coscheduled_alignment(), 8u);
    EXPECT_EQ(sms.device_ordinal(), 0);
    EXPECT_FALSE(sms.empty());
    EXPECT_FALSE(sms.from_split());
    const SmResource empty;
    EXPECT_TRUE(empty.empty());
    EXPECT_EQ(empty.sm_count(), 0u);
    EXPECT_EQ(empty.handle(), nullptr);
}

TEST(SmResource, SplitOptionsAreCheckedBeforeTheDriver) {
    const SmResource sms = fake_sms(132);
    EXPECT_MENTIONS(refusal(sms, {.count = 2, .min_sm_count = 0}),
                    "SmSplitOptions::min_sm_count is 0; it must be at least 1");
    EXPECT_MENTIONS(refusal(sms, {.count = 1, .min_sm_count = 200}),
                    "SmSplitOptions::min_sm_count is 200 but the resource has 132 SMs");
    const std::string message = refusal(sms, {.count = 3, .min_sm_count = 64});
    EXPECT_MENTIONS(message, "SmResource::split on device 0");
    EXPECT_MENTIONS(message, "SmSplitOptions::count 3 groups of at least 64 SMs need more than "
                             "the resource's 132 SMs");
}

TEST(SmResource, EmptyAndSplitResourcesAreRefused) {
    EXPECT_MENTIONS(refusal(SmResource(), {}), "the SmResource is empty");
    EXPECT_MENTIONS(refusal(fake_sms(64, true), {.count = 2, .min_sm_count = 8}),
                    "cannot split it again");
    try {
        GreenContext::create(SmResource());
        ADD_FAILURE() << "no error";
    } catch (const InvalidArgumentError& e) {
        EXPECT_MENTIONS(std::string(e.what()), "GreenContext::create: the SmResource is empty");
    }
}

TEST(SmSplit, DescribesGroupsAndRemainder) {
    SmSplit split;
    split.groups = {fake_sms(64, true), fake_sms(64, true)};
    split.remainder = {fake_sms(4, true)};
    EXPECT_EQ(split.describe(), "device 0: 132 SMs -> 2 group(s) of 64, 64 SMs; remainder 4 SMs");
}

TEST(GreenContextNoDriver, EntryPointsThrowNoDriverError) {
    auto result = test::run_process({test::helper_path("hopper_no_driver_probe").string()},
                                    {{"CUDACORE_LIBCUDA_PATH", "/nonexistent/libcuda.so.1"}});
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    for (const char* entry : {"sm_resource", "SmResource::split", "GreenContext::create"})
        EXPECT_NE(result.out.find(std::string(entry) + ": NoDriverError"), std::string::npos)
            << entry << "\n" << result.out;
    EXPECT_EQ(result.out.find("UNEXPECTED"), std::string::npos) << result.out;
}

}  // namespace
