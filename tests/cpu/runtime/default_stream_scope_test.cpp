// A call on a default stream runs with the stream's own context current, against a stand-in
// driver that logs the context calls: a default stream (legacy, per-thread, null) whose context
// is not current has it pushed for the call and popped after, whatever was current before (none,
// or another context); one whose context is current, and any other stream, cost no driver call
// beyond that comparison (runtime/default_stream_scope.hpp, which Context::default_stream's
// streams rely on to leave the calling thread's current context alone).
#include "runtime/default_stream_scope.hpp"

#include "empty_stream.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace cudacore;

// The stand-in's context stack, and the calls made.
struct StandIn {
    std::vector<CUcontext> stack;
    std::vector<std::string> log;
};
StandIn stand_in;

CUcontext context_at(std::uintptr_t value) { return reinterpret_cast<CUcontext>(value); }

CUresult get_current(CUcontext* current) {
    stand_in.log.push_back("get");
    *current = stand_in.stack.empty() ? nullptr : stand_in.stack.back();
    return CUDA_SUCCESS;
}
CUresult push_current(CUcontext context) {
    stand_in.log.push_back("push " + std::to_string(reinterpret_cast<std::uintptr_t>(context)));
    stand_in.stack.push_back(context);
    return CUDA_SUCCESS;
}
CUresult pop_current(CUcontext* popped) {
    stand_in.log.push_back("pop");
    *popped = stand_in.stack.back();
    stand_in.stack.pop_back();
    return CUDA_SUCCESS;
}

void load_stand_in() {
    static detail::DriverApi api = [] {
        detail::DriverApi table;
        table.cuCtxGetCurrent = get_current;
        table.cuCtxPushCurrent = push_current;
        table.cuCtxPopCurrent = pop_current;
        return table;
    }();
    detail::loaded_driver.store(&api);
    stand_in = {};
}

// A stream box with `handle`, of a context whose handle is 0xA00.
std::shared_ptr<detail::StreamBox> stream_of(CUstream handle) {
    auto context = std::make_shared<detail::ContextBox>();
    context->handle = context_at(0xA00);
    context->retained = false;
    auto box = std::make_shared<detail::StreamBox>();
    box->handle = handle;
    box->context = std::move(context);
    box->owned = false;
    return box;
}

TEST(DefaultStreamScope, ADefaultStreamsContextIsPushedForTheCallWhenNoneIsCurrent) {
    for (CUstream handle : {CU_STREAM_LEGACY, CU_STREAM_PER_THREAD, static_cast<CUstream>(nullptr)}) {
        load_stand_in();
        const auto box = stream_of(handle);
        {
            const detail::DefaultStreamScope scope(*box);
            ASSERT_EQ(stand_in.stack.size(), 1u);
            EXPECT_EQ(stand_in.stack.back(), context_at(0xA00));
        }
        EXPECT_TRUE(stand_in.stack.empty()) << "the context was left current";
        EXPECT_EQ(stand_in.log, (std::vector<std::string>{"get", "push 2560", "pop"}));
    }
}

TEST(DefaultStreamScope, AnotherCurrentContextIsCurrentAgainAfterTheCall) {
    load_stand_in();
    stand_in.stack = {context_at(0xB00)};
    const auto box = stream_of(CU_STREAM_LEGACY);
    {
        const detail::DefaultStreamScope scope(*box);
        EXPECT_EQ(stand_in.stack.back(), context_at(0xA00));
    }
    EXPECT_EQ(stand_in.stack, (std::vector<CUcontext>{context_at(0xB00)}));
}

TEST(DefaultStreamScope, ItsOwnContextCurrentOrAnyOtherStreamCallsNothingMore) {
    load_stand_in();
    stand_in.stack = {context_at(0xA00)};
    {
        const detail::DefaultStreamScope scope(*stream_of(CU_STREAM_LEGACY));
    }
    EXPECT_EQ(stand_in.log, (std::vector<std::string>{"get"})) << "its context was current already";
    load_stand_in();
    {
        const detail::DefaultStreamScope scope(*stream_of(reinterpret_cast<CUstream>(0x1234)));
        const detail::DefaultStreamScope from_object(test::fake_stream(0x1234));
    }
    EXPECT_TRUE(stand_in.log.empty()) << "a created stream asked the driver";
}

TEST(DefaultStreamScope, AnEmptyStreamObjectDoesNothing) {
    load_stand_in();
    { const detail::DefaultStreamScope scope(test::no_stream()); }
    EXPECT_TRUE(stand_in.log.empty());
}

}  // namespace
