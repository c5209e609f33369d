// Contexts cudacore creates (Context::create) on a real GPU: flags and affinity read back, every
// kind of object made in one works and may be released in any order around the context, two
// contexts on one device keep their modules and memory apart, and a thread makes one current.
#include "kernel_sources.hpp"
#include "test_support.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/context.hpp"
#include "cudacore/current_context_scope.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/event.hpp"
#include "cudacore/graph.hpp"
#include "cudacore/graph_builder.hpp"
#include "cudacore/graph_exec.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/legacy_pinned_memory_resource.hpp"
#include "cudacore/program.hpp"
#include "cudacore/stream.hpp"
#include "cudacore/synchronous_memory_resource.hpp"
#include "graph/graph_box.hpp"
#include "loader/driver_api.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <any>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <thread>
#include <vector>

namespace {

using namespace cudacore;

CUcontext current_context() {
    CUcontext current = nullptr;
    EXPECT_EQ(detail::driver().cuCtxGetCurrent(&current), CUDA_SUCCESS);
    return current;
}

// The context a pointer belongs to (CU_POINTER_ATTRIBUTE_CONTEXT).
CUcontext context_of(CUdeviceptr pointer) {
    CUcontext owner = nullptr;
    EXPECT_EQ(detail::driver().cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, pointer),
              CUDA_SUCCESS);
    return owner;
}

class CreatedContextGpu : public ::testing::Test {
protected:
    void SetUp() override {
        CUDACORE_REQUIRE_GPU();
        device_.emplace(0);
        ProgramOptions options;
        options.name = "created_context_test";
        options.arch = device_->arch();
        code_ = Program(test::kSaxpySource, SourceType::cxx, options).compile(CodeType::cubin);
    }

    // y = 2 x + y on `stream` over n floats (x = i, y = 1), then checks y on the host. The
    // library launched (`code`, else code_) holds `stream`, and so its context, until the
    // library is released: it must not unload while a kernel of it may still run there.
    void expect_saxpy(const Stream& stream, const Buffer& x, const Buffer& y, std::size_t n,
                      const ObjectCode* code = nullptr) {
        std::vector<float> host_x(n), host_y(n, 1.0f);
        for (std::size_t i = 0; i < n; ++i) host_x[i] = static_cast<float>(i);
        x.copy_from(host_x, stream);
        y.copy_from(host_y, stream);
        launch(stream, LaunchConfig{.grid = static_cast<unsigned>((n + 127) / 128), .block = 128},
               (code ? *code : *code_).get_kernel("saxpy"), 2.0f, x, y, n);
        y.copy_to(host_y, stream);
        stream.sync();
        std::size_t wrong = 0;
        for (std::size_t i = 0; i < n; ++i) wrong += host_y[i] != 2.0f * i + 1.0f;
        EXPECT_EQ(wrong, 0u);
    }

    std::optional<Device> device_;
    std::optional<ObjectCode> code_;
};

TEST_F(CreatedContextGpu, EachSchedulingFlagReadsBack) {
    const CUcontext before = current_context();
    for (ContextScheduling scheduling :
         {ContextScheduling::automatic, ContextScheduling::spin, ContextScheduling::yield,
          ContextScheduling::blocking_sync}) {
        const ContextOptions asked{.scheduling = scheduling, .lmem_resize_to_max = true};
        Context context = Context::create(*device_, asked);
        EXPECT_TRUE(context.is_created());
        EXPECT_NE(context.handle(), device_->context().handle());
        EXPECT_EQ(context.device(), *device_);
        EXPECT_EQ(current_context(), before) << "create changed the current context";
        const unsigned flags = context.flags();
        std::printf("asked flags 0x%x, the driver reports 0x%x\n", asked.flags(), flags);
        const ContextOptions got = context.options();
        if (scheduling == ContextScheduling::automatic) {
            // The driver may report the policy its heuristic chose (spin or yield).
            EXPECT_NE(got.scheduling, ContextScheduling::blocking_sync) << flags;
        } else {
            EXPECT_EQ(flags & CU_CTX_SCHED_MASK, asked.flags() & CU_CTX_SCHED_MASK) << flags;
            EXPECT_EQ(got.scheduling, scheduling);
        }
        EXPECT_FALSE(got.sync_memops);
        EXPECT_FALSE(got.sm_count.has_value());
        EXPECT_GE(context.api_version(), 3020u);
        EXPECT_EQ(context.sm_count(), static_cast<unsigned>(device_->multiprocessor_count()));
    }
    // map_host and lmem_resize_to_max are the driver's behaviour always now (it may or may not
    // report their bits); sync_memops is a flag of its own.
    const Context synced = Context::create(*device_, {.map_host = true, .sync_memops = true});
    EXPECT_NE(synced.flags() & CU_CTX_SYNC_MEMOPS, 0u) << synced.flags();
    EXPECT_TRUE(synced.options().sync_memops);
    // The primary context answers the same queries and is not a created one.
    EXPECT_FALSE(device_->context().is_created());
    EXPECT_GE(device_->context().api_version(), 3020u);
}

TEST_F(CreatedContextGpu, BadOptionsAreRefusedBeforeTheDriver) {
    const CUcontext before = current_context();
    test::expect_invalid(
        [&] { Context::create(*device_, {.scheduling = static_cast<ContextScheduling>(7)}); },
        {"ContextOptions::scheduling", "7"});
    test::expect_invalid([&] { Context::create(*device_, {.sm_count = 0u}); },
                         {"sm_count is 0", "device 0"});
    test::expect_invalid([&] { Context::create(*device_, ContextOptions::from_flags(0x3)); },
                         {"more than one scheduling bit"});
    EXPECT_EQ(current_context(), before);
}

TEST_F(CreatedContextGpu, ExecutionAffinityWhereTheDriverOffersIt) {
    int supported = 0;
    ASSERT_EQ(detail::driver().cuDeviceGetExecAffinitySupport(
                  &supported, CU_EXEC_AFFINITY_TYPE_SM_COUNT, device_->handle()),
              CUDA_SUCCESS);
    const unsigned total = static_cast<unsigned>(device_->multiprocessor_count());
    const unsigned half = std::max(1u, total / 2);
    if (!supported) {
        std::printf("no SM-count execution affinity on device 0 (needs MPS): checking the error\n");
        test::expect_invalid([&] { Context::create(*device_, {.sm_count = half}); },
                             {"sm_count", "execution affinity", "MPS"});
        return;
    }
    const Context limited = Context::create(*device_, {.sm_count = half});
    EXPECT_GE(limited.sm_count(), half);  // rounded up to what the hardware supports
    EXPECT_LE(limited.sm_count(), total);
    std::printf("asked %u of %u SMs, got %u\n", half, total, limited.sm_count());
    test::expect_invalid([&] { Context::create(*device_, {.sm_count = total + 1}); },
                         {"more than the device's"});
}

TEST_F(CreatedContextGpu, ObjectsWorkAndReleaseInAnyOrder) {
    constexpr std::size_t n = 4096;
    const LaunchConfig config{.grid = n / 128, .block = 128};
    for (unsigned seed = 0; seed < 8; ++seed) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        std::optional<Context> context = Context::create(*device_);
        const std::weak_ptr<detail::ContextBox> box = detail::box_of(*context);
        const CUcontext handle = context->handle();
        // This seed's own library (the same cubin): it holds the streams it ran on.
        std::optional<ObjectCode> code = ObjectCode::from_cubin(std::string(code_->code()), "saxpy");

        std::optional<Stream> stream = context->create_stream();
        EXPECT_EQ(stream->context(), *context);
        std::optional<Event> event = context->create_event();
        EXPECT_EQ(event->context(), *context);
        auto synchronous = std::make_shared<SynchronousMemoryResource>(*context);
        auto pinned = std::make_shared<LegacyPinnedMemoryResource>(*context);
        std::optional<Buffer> x = synchronous->allocate(n * sizeof(float), *stream);  // cuMemAlloc
        std::optional<Buffer> y = device_->allocate(n * sizeof(float), *stream);  // device's pool
        std::optional<Buffer> host = pinned->allocate(n * sizeof(float), *stream);
        EXPECT_EQ(context_of(x->handle()), handle);
        expect_saxpy(*stream, *x, *y, n, &*code);

        // A graph built node by node in the context, and one captured on its stream.
        std::optional<Graph> graph = Graph::create(*context);
        EXPECT_EQ(detail::box_of(*graph)->context, detail::box_of(*context));
        graph->add_kernel({}, config, code->get_kernel("saxpy"), 1.0f, *x, *y, n);  // y += x
        std::optional<GraphExec> node_exec = graph->instantiate();
        std::optional<GraphExec> captured_exec;
        {
            GraphBuilder builder = stream->begin_capture();
            launch(builder, config, code->get_kernel("saxpy"), -1.0f, *x, *y, n);  // y -= x
            captured_exec = builder.end().instantiate();
        }
        node_exec->launch(*stream);
        node_exec->launch(*stream);
        captured_exec->launch(*stream);
        y->copy_to(*host, *stream);
        stream->record(*event);
        event->sync();
        std::vector<float> result(n);
        std::memcpy(result.data(), reinterpret_cast<const void*>(host->handle()),
                    n * sizeof(float));
        std::size_t wrong = 0;
        for (std::size_t i = 0; i < n; ++i) wrong += result[i] != 3.0f * i + 1.0f;
        EXPECT_EQ(wrong, 0u);

        // The Context value goes first: what was made in it keeps it, and work still runs.
        context.reset();
        EXPECT_FALSE(box.expired());
        expect_saxpy(*stream, *x, *y, n, &*code);

        // Then everything else, in an order that depends on the seed; the context is destroyed
        // with the last of them.
        std::vector<std::function<void()>> drops = {
            [&] { x.reset(); },           [&] { y.reset(); },
            [&] { host.reset(); },        [&] { synchronous.reset(); },
            [&] { pinned.reset(); },      [&] { graph.reset(); },
            [&] { node_exec.reset(); },   [&] { captured_exec.reset(); },
            [&] { stream.reset(); },      [&] { event.reset(); },
            [&] { code.reset(); },
        };
        std::shuffle(drops.begin(), drops.end(), std::mt19937(seed));
        for (std::size_t i = 0; i < drops.size(); ++i) {
            EXPECT_FALSE(box.expired()) << "destroyed with " << drops.size() - i << " objects left";
            drops[i]();
        }
        // Releases of streams' work may finish on the release thread: give it a moment.
        EXPECT_TRUE(test::wait_until([&] { return box.expired(); }, std::chrono::seconds(5)))
            << "the context outlived every object made in it";
    }
}

TEST_F(CreatedContextGpu, AModuleOfOneContextIsNotUsableInAnother) {
    const Context a = Context::create(*device_);
    const Context b = Context::create(*device_);
    ASSERT_NE(a.handle(), b.handle());
    const auto& api = detail::driver();

    // A module loaded in A (cuModuleLoadData, which the loader does not resolve: the symbols the
    // driver library exports) gives a function in A that does not run in B.
    void* library = dlopen("libcuda.so.1", RTLD_NOW);
    ASSERT_NE(library, nullptr);
    using LoadData = CUresult (*)(CUmodule*, const void*);
    using GetFunction = CUresult (*)(CUfunction*, CUmodule, const char*);
    using Unload = CUresult (*)(CUmodule);
    const auto load_data = reinterpret_cast<LoadData>(dlsym(library, "cuModuleLoadData"));
    const auto get_function = reinterpret_cast<GetFunction>(dlsym(library, "cuModuleGetFunction"));
    const auto unload = reinterpret_cast<Unload>(dlsym(library, "cuModuleUnload"));
    ASSERT_TRUE(load_data && get_function && unload);
    CUmodule module = nullptr;
    CUfunction function = nullptr;
    {
        CurrentContextScope in_a(a);
        ASSERT_EQ(load_data(&module, code_->code().data()), CUDA_SUCCESS);
        EXPECT_EQ(get_function(&function, module, "saxpy"), CUDA_SUCCESS);
    }
    {
        // Neither looked up with B current nor launched on a stream of B does A's code run in B.
        const Stream stream_b = b.create_stream();
        CurrentContextScope in_b(b);
        CUfunction elsewhere = nullptr;
        const CUresult lookup = get_function(&elsewhere, module, "saxpy");
        float scale = 1.0f;
        CUdeviceptr none = 0;
        std::size_t count = 0;
        void* arguments[] = {&scale, &none, &none, &count};
        const CUresult launched = api.cuLaunchKernel(function, 1, 1, 1, 1, 1, 1, 0,
                                                     stream_b.handle(), arguments, nullptr);
        std::printf("A's module with B current: cuModuleGetFunction %d, cuLaunchKernel on B's "
                    "stream %d\n", static_cast<int>(lookup), static_cast<int>(launched));
        EXPECT_NE(launched, CUDA_SUCCESS) << "A's function ran on a stream of B";
        stream_b.sync();
    }
    {
        CurrentContextScope in_a(a);
        EXPECT_EQ(unload(module), CUDA_SUCCESS);
    }
    dlclose(library);
}

TEST_F(CreatedContextGpu, TwoContextsKeepTheirMemoryApart) {
    const Context a = Context::create(*device_);
    const Context b = Context::create(*device_);
    ASSERT_NE(a.handle(), b.handle());
    const auto& api = detail::driver();

    // cudacore's kernels are context-independent: each context gets its own function of it.
    const Kernel kernel = code_->get_kernel("saxpy");
    CUfunction in_a = nullptr, in_b = nullptr;
    {
        CurrentContextScope scope(a);
        ASSERT_EQ(api.cuKernelGetFunction(&in_a, kernel.handle()), CUDA_SUCCESS);
    }
    {
        CurrentContextScope scope(b);
        ASSERT_EQ(api.cuKernelGetFunction(&in_b, kernel.handle()), CUDA_SUCCESS);
    }
    EXPECT_NE(in_a, in_b);

    // Memory of each context is reported as that context's, and kernels in each work.
    constexpr std::size_t n = 1024;
    auto memory_a = std::make_shared<SynchronousMemoryResource>(a);
    auto memory_b = std::make_shared<SynchronousMemoryResource>(b);
    const Stream stream_a = a.create_stream();
    const Stream stream_b = b.create_stream();
    const Buffer xa = memory_a->allocate(n * sizeof(float), stream_a);
    const Buffer ya = memory_a->allocate(n * sizeof(float), stream_a);
    const Buffer xb = memory_b->allocate(n * sizeof(float), stream_b);
    const Buffer yb = memory_b->allocate(n * sizeof(float), stream_b);
    EXPECT_EQ(context_of(xa.handle()), a.handle());
    EXPECT_EQ(context_of(ya.handle()), a.handle());
    EXPECT_EQ(context_of(xb.handle()), b.handle());
    EXPECT_EQ(context_of(yb.handle()), b.handle());
    EXPECT_NE(memory_a->description().find("created context"), std::string::npos)
        << memory_a->description();
    expect_saxpy(stream_a, xa, ya, n);
    expect_saxpy(stream_b, xb, yb, n);
    a.sync();
    b.sync();
}

TEST_F(CreatedContextGpu, AThreadMakesItCurrent) {
    const Context context = Context::create(*device_, {.scheduling = ContextScheduling::yield});
    const CUcontext before = current_context();
    std::thread worker([&] {
        EXPECT_EQ(current_context(), nullptr);  // a new thread has none
        {
            CurrentContextScope scope(context);
            EXPECT_EQ(current_context(), context.handle());
            EXPECT_EQ(Context::current(), context);
            EXPECT_EQ(Device::current(), *device_);
            {
                CurrentContextScope primary(device_->context());  // scopes nest
                EXPECT_EQ(current_context(), device_->context().handle());
            }
            EXPECT_EQ(current_context(), context.handle());
            // The stream of a created context runs work from this thread too.
            const Stream stream = context.create_stream();
            auto memory = std::make_shared<SynchronousMemoryResource>(context);
            const Buffer x = memory->allocate(256 * sizeof(float), stream);
            const Buffer y = memory->allocate(256 * sizeof(float), stream);
            expect_saxpy(stream, x, y, 256);
        }
        EXPECT_EQ(current_context(), nullptr);
        context.set_current();
        EXPECT_EQ(current_context(), context.handle());
        unsigned flags = 0;
        EXPECT_EQ(detail::driver().cuCtxGetFlags(&flags), CUDA_SUCCESS);
        EXPECT_EQ(flags & CU_CTX_SCHED_MASK, unsigned{CU_CTX_SCHED_YIELD});
        EXPECT_EQ(detail::driver().cuCtxSetCurrent(nullptr), CUDA_SUCCESS);
    });
    worker.join();
    EXPECT_EQ(current_context(), before) << "another thread's current context leaked here";
}

TEST_F(CreatedContextGpu, TheCurrentContextGivesTheOwningContext) {
    std::optional<Context> context = Context::create(*device_);
    const std::weak_ptr<detail::ContextBox> box = detail::box_of(*context);
    std::optional<Stream> stream;
    std::optional<Stream> wrapped;
    {
        CurrentContextScope on(*context);
        const Context current = Context::current();
        EXPECT_TRUE(current.is_created());
        EXPECT_EQ(detail::box_of(current), box.lock()) << "not the owning box";
        stream = current.create_stream();
        // A stream of it wrapped from its handle holds the context too.
        wrapped = Stream::from_handle(stream->handle());
        EXPECT_EQ(detail::box_of(*wrapped)->context, box.lock());
        EXPECT_EQ(Context::from_handle(context->handle()), *context);
        EXPECT_EQ(detail::box_of(Context::from_handle(context->handle())), box.lock());
    }
    context.reset();  // the streams keep it
    wrapped.reset();
    EXPECT_FALSE(box.expired());
    {
        auto memory = std::make_shared<SynchronousMemoryResource>(stream->context());
        const Buffer x = memory->allocate(512 * sizeof(float), *stream);
        const Buffer y = memory->allocate(512 * sizeof(float), *stream);
        expect_saxpy(*stream, x, y, 512);
    }
    stream.reset();
    // The library saxpy ran from holds the stream it ran on until it is released.
    EXPECT_FALSE(box.expired());
    code_.reset();
    EXPECT_TRUE(test::wait_until([&] { return box.expired(); }, std::chrono::seconds(5)))
        << "the context outlived its last stream and the library launched on it";

    // A thread with no current context is told so.
    std::thread([] {
        test::expect_invalid([] { Context::current(); },
                             {"Context::current", "no context is current"});
    }).join();
}

TEST_F(CreatedContextGpu, CloseEndsEveryCopyAndResetLetsGoOfOne) {
    Context first = Context::create(*device_);
    Context closed_with_it = first;
    // Another owner of the same context (as the objects made in it are): not closed with `first`.
    Context second = detail::BoxAccess::make<Context>(detail::box_of(first));
    const std::weak_ptr<detail::ContextBox> box = detail::box_of(first);
    first.close();
    EXPECT_TRUE(closed_with_it.is_closed());
    EXPECT_TRUE(first.is_closed());
    EXPECT_EQ(first.handle(), nullptr);
    test::expect_invalid([&] { first.create_stream(); }, {"Context::create_stream", "closed"});
    test::expect_invalid([&] { (void)first.flags(); }, {"Context::flags", "closed"});
    test::expect_invalid([&] { CurrentContextScope scope(first); }, {"closed"});
    test::expect_invalid([&] { SynchronousMemoryResource memory(first); }, {"closed"});
    test::expect_invalid([&] { Graph::create(first); }, {"closed"});
    first.close();  // twice: nothing
    EXPECT_FALSE(box.expired());
    second.create_stream().sync();
    Context last = second;
    second.reset();  // one share: the context lives on in `last`
    EXPECT_FALSE(box.expired());
    last.close();
    // A stream's release may finish on the release thread: give it a moment.
    EXPECT_TRUE(test::wait_until([&] { return box.expired(); }, std::chrono::seconds(5)))
        << "closing the last copy did not destroy the context";
}

// from_handle with take_ownership: a context the caller made becomes cudacore's, as one
// Context::create made: work runs in it, a later wrap of its handle gives the owner, and the last
// holder destroys it. A primary context is refused.
TEST_F(CreatedContextGpu, FromHandleTakingOwnershipDestroysTheContext) {
    CUcontext raw = nullptr;
    ASSERT_EQ(detail::driver().cuCtxCreate(&raw, nullptr, 0, device_->handle()), CUDA_SUCCESS);
    CUcontext popped = nullptr;
    detail::driver().cuCtxPopCurrent(&popped);
    std::weak_ptr<detail::ContextBox> box;
    {
        const Context taken = Context::from_handle(raw, {.take_ownership = true});
        box = detail::box_of(taken);
        EXPECT_EQ(Context::from_handle(raw), taken);  // found again: the owner
        Stream stream = taken.create_stream();
        stream.record();
        stream.sync();
    }
    EXPECT_TRUE(test::wait_until([&] { return box.expired(); }, std::chrono::seconds(5)))
        << "the last holder did not destroy the taken context";
    try {
        Context::from_handle(device_->context().handle(), {.take_ownership = true});
        ADD_FAILURE() << "a primary context was taken";
    } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("primary context"), std::string::npos) << e.what();
    }
}

}  // namespace
