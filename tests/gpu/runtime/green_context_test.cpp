// Green contexts on a real GPU: the device's SMs split in two halves, kernels on each half's
// stream run on disjoint SM sets and at the same time, and streams hold their green context.
#include "hopper_kernels.hpp"
#include "test_support.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/green_context.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/program.hpp"

#include <algorithm>
#include <iterator>
#include <optional>
#include <set>
#include <vector>

namespace {

using namespace cudacore;

class GreenContextGpu : public ::testing::Test {
protected:
    void SetUp() override {
        CUDACORE_REQUIRE_GPU();
        device_.emplace(0);
        sms_ = sm_resource(*device_);
        // Half the SMs each, rounded down to the device's granularity (64 + 64 of an H100's
        // 132; compute 9.0 groups are multiples of 8 SMs).
        const unsigned granularity = std::max(
            {1u, sms_.coscheduled_alignment(), sms_.min_partition_size(),
             device_->compute_capability().major >= 9 ? 8u : 2u});
        half_ = sms_.sm_count() / 2 / granularity * granularity;
        if (half_ < std::max(1u, sms_.min_partition_size()))
            GTEST_SKIP() << "device 0 has too few SMs (" << sms_.sm_count() << ") for two groups";
        ProgramOptions options;
        options.name = "green_context_test";
        options.arch = device_->arch();
        code_ = Program(test::green_context_kernels, SourceType::cxx, options)
                    .compile(CodeType::cubin);
    }

    std::optional<Device> device_;
    SmResource sms_;
    unsigned half_ = 0;
    std::optional<ObjectCode> code_;
};

TEST_F(GreenContextGpu, SplitReportsGroupsAndRemainder) {
    const SmSplit split = sms_.split({.count = 2, .min_sm_count = half_});
    ASSERT_EQ(split.groups.size(), 2u) << split.describe();
    unsigned used = 0;
    for (const SmResource& group : split.groups) {
        EXPECT_GE(group.sm_count(), half_) << split.describe();
        EXPECT_TRUE(group.from_split());
        EXPECT_EQ(group.device_ordinal(), 0);
        used += group.sm_count();
    }
    const unsigned remainder = split.remainder.empty() ? 0 : split.remainder[0].sm_count();
    EXPECT_EQ(used + remainder, sms_.sm_count()) << split.describe();
    EXPECT_EQ(static_cast<int>(sms_.sm_count()), device_->multiprocessor_count());
    std::printf("%s\n", split.describe().c_str());
    // A group cannot be split again (refused before the driver), and too many groups is refused.
    EXPECT_THROW(split.groups[0].split({.count = 2, .min_sm_count = 8}), InvalidArgumentError);
    EXPECT_THROW(sms_.split({.count = 3, .min_sm_count = half_}), InvalidArgumentError);
    // count 0: as many groups as fit.
    const SmSplit all = sms_.split({.count = 0, .min_sm_count = half_});
    EXPECT_GE(all.groups.size(), 2u) << all.describe();
}

TEST_F(GreenContextGpu, KernelsRunOnDisjointSmsAndConcurrently) {
    const SmSplit split = sms_.split({.count = 2, .min_sm_count = half_});
    ASSERT_EQ(split.groups.size(), 2u);
    GreenContext green[2] = {GreenContext::create(split.groups[0]),
                             GreenContext::create(split.groups[1])};
    Stream streams[2] = {green[0].create_stream(), green[1].create_stream()};
    for (int i = 0; i < 2; ++i) {
        EXPECT_EQ(green[i].sm_count(), split.groups[i].sm_count());
        EXPECT_EQ(streams[i].context(), green[i].context());
        EXPECT_EQ(streams[i].device(), *device_);
        EXPECT_TRUE(streams[i].non_blocking());
    }

    // Device memory of the primary context, used from both green contexts.
    const Stream setup = device_->create_stream();
    const unsigned blocks = 4 * sms_.sm_count();
    Buffer sm_ids[2] = {device_->allocate(blocks * sizeof(unsigned), setup),
                        device_->allocate(blocks * sizeof(unsigned), setup)};
    for (Buffer& ids : sm_ids) ids.fill_uint32(~0u, setup);
    Buffer flags = device_->allocate(4 * sizeof(unsigned), setup);
    flags.fill_uint32(0, setup);
    setup.sync();

    const Kernel record_sm = code_->get_kernel("record_sm");
    const unsigned long long hold_ns = 200'000;
    for (int i = 0; i < 2; ++i)
        launch(streams[i], LaunchConfig{.grid = blocks, .block = 128}, record_sm, sm_ids[i],
               hold_ns);

    // Each kernel waits (up to 5 s) for the other's flag: both see it only if both ran at once.
    const Kernel meet = code_->get_kernel("meet");
    const CUdeviceptr flag = flags.handle();
    const unsigned long long timeout_ns = 5'000'000'000ull;
    launch(streams[0], LaunchConfig{.grid = 1, .block = 1}, meet, flag, flag + 4, flag + 8,
           timeout_ns);
    launch(streams[1], LaunchConfig{.grid = 1, .block = 1}, meet, flag + 4, flag, flag + 12,
           timeout_ns);

    std::vector<unsigned> ids[2] = {std::vector<unsigned>(blocks), std::vector<unsigned>(blocks)};
    for (int i = 0; i < 2; ++i) sm_ids[i].copy_to(ids[i], streams[i]);
    streams[0].sync();
    streams[1].sync();
    green[0].sync();

    std::set<unsigned> used[2];
    for (int i = 0; i < 2; ++i) {
        used[i] = std::set<unsigned>(ids[i].begin(), ids[i].end());
        EXPECT_EQ(used[i].count(~0u), 0u) << "a block on green context " << i << " did not run";
    }
    for (int i = 0; i < 2; ++i) {
        EXPECT_LE(used[i].size(), green[i].sm_count()) << "green context " << i;
        EXPECT_GE(used[i].size(), green[i].sm_count() / 2) << "green context " << i;
    }
    std::vector<unsigned> shared;
    std::set_intersection(used[0].begin(), used[0].end(), used[1].begin(), used[1].end(),
                          std::back_inserter(shared));
    EXPECT_TRUE(shared.empty()) << shared.size() << " SM(s) ran kernels of both green contexts";
    // Both streams are done: both flags and both answers are final.
    std::vector<unsigned> final_flags(4);
    flags.copy_to(final_flags, setup);
    setup.sync();
    EXPECT_EQ(final_flags[0], 1u);
    EXPECT_EQ(final_flags[1], 1u);
    EXPECT_EQ(final_flags[2], 1u) << "the kernel on green context 0 never saw the other run";
    EXPECT_EQ(final_flags[3], 1u) << "the kernel on green context 1 never saw the other run";
}

TEST_F(GreenContextGpu, StreamsAndEventsHoldTheirGreenContext) {
    const SmSplit split = sms_.split({.count = 2, .min_sm_count = half_});
    std::optional<Stream> stream;
    std::optional<Event> event;
    {
        GreenContext green = GreenContext::create(split.groups[1]);
        stream.emplace(green.create_stream({.priority = 0}));
        event.emplace(green.create_event());
        EXPECT_THROW(green.create_stream({.non_blocking = false}), InvalidArgumentError);
    }  // the last GreenContext handle goes; the stream still holds the green context
    const Stream setup = device_->create_stream();
    const unsigned blocks = 64;
    Buffer sm_ids = device_->allocate(blocks * sizeof(unsigned), setup);
    sm_ids.fill_uint32(~0u, setup);
    setup.sync();
    launch(*stream, LaunchConfig{.grid = blocks, .block = 32}, code_->get_kernel("record_sm"),
           sm_ids, 1000ull);
    stream->record(*event);
    event->sync();
    std::vector<unsigned> ids(blocks, ~0u);
    sm_ids.copy_to(ids, *stream);
    stream->sync();
    for (unsigned id : ids) EXPECT_NE(id, ~0u) << "a block of the kernel did not run";
    EXPECT_LE(std::set<unsigned>(ids.begin(), ids.end()).size(), split.groups[1].sm_count());
    // The green context goes with its last stream and event (and the library that ran there).
    stream.reset();
    event.reset();
}

}  // namespace
