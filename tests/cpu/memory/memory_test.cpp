// Buffer and memory resources without a GPU: argument validation, ownership and lifetime
// (through a host-memory test resource), and no-driver behaviour (in a child process).
#include "empty_stream.hpp"
#include "host_memory_resource.hpp"
#include "test_support.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/stream.hpp"
#include "support/box_access.hpp"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <vector>

namespace {

using cudacore::Buffer;
using cudacore::InvalidArgumentError;
using cudacore::Stream;
using cudacore::test::HostMemoryResource;
using cudacore::test::expect_invalid;
using cudacore::test::fake_stream;
using cudacore::test::no_stream;

TEST(Buffer, AllocateHoldsResourceAndFreesOnceWhenLastCopyGoes) {
    auto resource = std::make_shared<HostMemoryResource>();
    std::weak_ptr<HostMemoryResource> weak = resource;
    HostMemoryResource* raw = resource.get();
    {
        Buffer buffer = resource->allocate(64, no_stream());
        EXPECT_EQ(buffer.size(), 64u);
        EXPECT_NE(buffer.handle(), 0u);
        EXPECT_TRUE(buffer.owns_memory());
        EXPECT_FALSE(buffer.is_closed());
        EXPECT_TRUE(buffer.is_host_accessible());
        EXPECT_FALSE(buffer.is_device_accessible());
        EXPECT_EQ(buffer.memory_resource().get(), raw);
        resource.reset();
        EXPECT_FALSE(weak.expired()) << "the buffer must keep its resource alive";
        Buffer copy = buffer;
        EXPECT_EQ(copy, buffer);
        EXPECT_EQ(copy.handle(), buffer.handle());
        { Buffer dropped = std::move(buffer); }
        EXPECT_EQ(raw->frees.load(), 0) << "a copy still holds the memory";
        EXPECT_EQ(raw->allocations.load(), 1);
    }
    EXPECT_TRUE(weak.expired()) << "the resource goes with its last buffer";
}

TEST(MemoryResourceKeptUntilExit, ItsBuffersHoldNoReferenceAndItOutlivesItsOwners) {
    auto resource = std::make_shared<HostMemoryResource>();
    std::weak_ptr<HostMemoryResource> weak = resource;
    HostMemoryResource* raw = resource.get();
    Buffer before = resource->allocate(64, no_stream());
    EXPECT_EQ(resource.use_count(), 2) << "a buffer made before the call holds a reference";
    cudacore::keep_until_exit(resource);
    EXPECT_EQ(resource.use_count(), 3) << "cudacore's own reference";
    {
        std::vector<Buffer> buffers;
        for (int i = 0; i < 8; ++i) buffers.push_back(resource->allocate(32, no_stream()));
        EXPECT_EQ(resource.use_count(), 3) << "buffers made after the call hold no reference";
        EXPECT_EQ(buffers.front().memory_resource().get(), raw);
        cudacore::keep_until_exit(resource);  // again: nothing more
        EXPECT_EQ(resource.use_count(), 3);
        resource.reset();
        before = Buffer();
    }
    EXPECT_FALSE(weak.expired()) << "kept until the process ends";
    EXPECT_EQ(raw->allocations.load(), 9);
    EXPECT_EQ(raw->frees.load(), 9) << "its buffers still free their memory";
    expect_invalid([] { cudacore::keep_until_exit(nullptr); }, {"keep_until_exit", "null"});
}

TEST(MemoryResourceKeptUntilExit, KeepingItWhileThreadsAllocateLosesNoReferenceAndNoFree) {
    auto resource = std::make_shared<HostMemoryResource>();
    std::atomic<int> started{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&] {
            ++started;
            for (int i = 0; i < 2000; ++i) {
                Buffer buffer = resource->allocate(16, no_stream());
                Buffer copy = buffer;
            }
        });
    }
    while (started.load() < 4) std::this_thread::yield();
    cudacore::keep_until_exit(resource);
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(resource->allocations.load(), 8000);
    EXPECT_EQ(resource->frees.load(), 8000);
    EXPECT_EQ(resource.use_count(), 2) << "this test's reference and cudacore's, none left by a buffer";
}

TEST(Buffer, BuffersMadeOnOneThreadAndDroppedOnAnotherAreFreedOnceWithTheirOwnMemory) {
    // Boxes are reused through per-thread free lists and a shared one: a buffer made on one thread
    // and dropped (or closed) on another must free its own memory once, and a reused box must
    // never show another buffer's address or size.
    auto resource = std::make_shared<HostMemoryResource>();
    constexpr int kThreads = 4, kPerThread = 1500;
    std::mutex mutex;
    std::vector<Buffer> handed_over;
    std::vector<std::thread> makers;
    for (int t = 0; t < kThreads; ++t) {
        makers.emplace_back([&, t] {
            for (int i = 0; i < kPerThread; ++i) {
                const std::size_t size = 8 + 8 * (i % 5);
                Buffer buffer = resource->allocate(size, no_stream());
                const std::uint64_t mark = std::uint64_t(t) << 32 | std::uint64_t(i);
                std::memcpy(buffer.data(), &mark, sizeof mark);
                std::lock_guard lock(mutex);
                handed_over.push_back(std::move(buffer));
            }
        });
    }
    std::vector<std::thread> droppers;
    std::atomic<int> wrong{0};
    std::atomic<int> dropped{0};
    for (int t = 0; t < kThreads; ++t) {
        droppers.emplace_back([&, t] {
            while (dropped.load() < kThreads * kPerThread) {
                Buffer buffer;
                {
                    std::lock_guard lock(mutex);
                    if (handed_over.empty()) continue;
                    buffer = std::move(handed_over.back());
                    handed_over.pop_back();
                }
                std::uint64_t mark = 0;
                std::memcpy(&mark, buffer.data(), sizeof mark);
                if (buffer.size() != 8 + 8 * ((mark & 0xffffffff) % 5)) ++wrong;
                Buffer copy = buffer;
                if (t % 2) buffer.close();  // every copy closed, freed here
                if (!buffer.is_closed() && copy.handle() != buffer.handle()) ++wrong;
                ++dropped;
            }
        });
    }
    for (auto& thread : makers) thread.join();
    for (auto& thread : droppers) thread.join();
    EXPECT_EQ(wrong.load(), 0);
    EXPECT_EQ(resource->allocations.load(), kThreads * kPerThread);
    EXPECT_EQ(resource->frees.load(), kThreads * kPerThread);
    // The finished threads' free boxes serve new buffers.
    Buffer after = resource->allocate(16, no_stream());
    EXPECT_EQ(after.size(), 16u);
    EXPECT_FALSE(after.is_closed());
}

TEST(Buffer, AReusedBoxCarriesNothingOfItsLastBuffer) {
    auto first_resource = std::make_shared<HostMemoryResource>(true, 3);
    auto second_resource = std::make_shared<HostMemoryResource>(false, -1);
    const void* first_box = nullptr;
    {
        Buffer first = first_resource->allocate(64, no_stream());
        first_box = cudacore::detail::box_of(first);
        first.close();
    }
    std::vector<char> host(16);
    Buffer second = Buffer::wrap_unowned(host.data(), host.size(), second_resource);
    ASSERT_EQ(static_cast<const void*>(cudacore::detail::box_of(second)), first_box)
        << "the box is reused on this thread";
    EXPECT_FALSE(second.is_closed());
    EXPECT_EQ(second.handle(), reinterpret_cast<CUdeviceptr>(host.data()));
    EXPECT_EQ(second.size(), host.size());
    EXPECT_FALSE(second.owns_memory());
    EXPECT_EQ(second.device_ordinal(), -1);
    EXPECT_FALSE(second.is_host_accessible());
    EXPECT_EQ(second.memory_resource().get(), second_resource.get());
    second.close();
    EXPECT_EQ(second_resource->frees.load(), 0) << "wrapped memory is never freed";
    EXPECT_EQ(first_resource->frees.load(), 1);
}

TEST(Buffer, CopiesDroppedOnTwoThreadsAtOnceFreeOnce) {
    auto resource = std::make_shared<HostMemoryResource>();
    constexpr int kRounds = 2000;
    for (int i = 0; i < kRounds; ++i) {
        Buffer buffer = resource->allocate(32, no_stream());
        std::thread other([copy = buffer]() mutable { Buffer dropped = std::move(copy); });
        buffer = Buffer();
        other.join();
    }
    EXPECT_EQ(resource->allocations.load(), kRounds);
    EXPECT_EQ(resource->frees.load(), kRounds);
}

TEST(Buffer, CloseFreesOnceAndClosesEveryCopy) {
    auto resource = std::make_shared<HostMemoryResource>();
    Buffer buffer = resource->allocate(16, no_stream());
    Buffer copy = buffer;
    buffer.close();
    EXPECT_EQ(resource->frees.load(), 1);
    EXPECT_TRUE(buffer.is_closed());
    EXPECT_TRUE(copy.is_closed());
    EXPECT_EQ(copy.handle(), 0u);
    EXPECT_EQ(copy.size(), 16u) << "the size is kept for messages";
    buffer.close();
    copy.close(no_stream());
    EXPECT_EQ(resource->frees.load(), 1) << "closing twice frees once";
    { Buffer last = std::move(copy); }
    buffer = Buffer();
    EXPECT_EQ(resource->frees.load(), 1);
    // A resource of the caller's frees through its do_deallocate, closed or dropped.
    { Buffer dropped = resource->allocate(16, no_stream()); }
    EXPECT_EQ(resource->frees.load(), 2);
}

TEST(Buffer, UsingAClosedBufferNamesItAndItsSize) {
    auto resource = std::make_shared<HostMemoryResource>();
    Buffer buffer = resource->allocate(4096, no_stream());
    Buffer other = resource->allocate(4096, no_stream());
    buffer.close();
    std::vector<std::uint8_t> host(4096);
    const Stream stream = no_stream();
    expect_invalid([&] { buffer.copy_from(host, stream); }, {"copy_from", "closed", "4096 bytes"});
    expect_invalid([&] { buffer.copy_to(host, stream); }, {"copy_to", "closed", "4096 bytes"});
    expect_invalid([&] { buffer.copy_to(other, stream); }, {"closed", "4096 bytes"});
    expect_invalid([&] { other.copy_from(buffer, stream); }, {"source", "closed"});
    expect_invalid([&] { buffer.fill_byte(1, stream); }, {"fill_byte", "closed"});
    expect_invalid([&] { buffer.fill_uint32(1, stream); }, {"fill_uint32", "closed"});
    expect_invalid([&] { buffer.bytes(); }, {"bytes", "closed"});
    expect_invalid([&] { (void)buffer.is_host_accessible(); }, {"closed"});
    expect_invalid([&] { (void)buffer.device(); }, {"closed"});
}

TEST(Buffer, DefaultConstructedIsEmptyAndClosed) {
    Buffer empty;
    EXPECT_TRUE(empty.is_closed());
    EXPECT_FALSE(empty);
    EXPECT_EQ(empty.size(), 0u);
    EXPECT_EQ(empty.handle(), 0u);
    EXPECT_EQ(empty.memory_resource(), nullptr);
    EXPECT_FALSE(empty.owns_memory());
    empty.close();
    expect_invalid([&] { empty.fill_byte(0, no_stream()); }, {"empty buffer"});
}

TEST(Buffer, CopiesBetweenDifferentSizesNameBothSizes) {
    auto resource = std::make_shared<HostMemoryResource>();
    Buffer small = resource->allocate(100, no_stream());
    Buffer large = resource->allocate(200, no_stream());
    expect_invalid([&] { large.copy_from(small, no_stream()); },
                   {"sizes differ", "100 bytes", "200 bytes"});
    expect_invalid([&] { small.copy_to(large, no_stream()); },
                   {"sizes differ", "100 bytes", "200 bytes"});
    std::vector<std::uint32_t> host(10);  // 40 bytes
    expect_invalid([&] { small.copy_from(host, no_stream()); },
                   {"sizes differ", "40 bytes", "100 bytes"});
    expect_invalid([&] { small.copy_to(host, no_stream()); },
                   {"sizes differ", "40 bytes", "100 bytes"});
}

// cuda.core's rule (Buffer.copy_to / copy_from): sizes must be equal; its vmm_memory_example's
// 1 KiB into 4 KiB copy is refused, with both sizes named.
TEST(Buffer, OneKibibyteIntoFourIsRefusedAsInCudaCore) {
    auto resource = std::make_shared<HostMemoryResource>();
    Buffer kib = resource->allocate(1024, no_stream());
    Buffer four_kib = resource->allocate(4096, no_stream());
    expect_invalid([&] { four_kib.copy_from(kib, no_stream()); },
                   {"Buffer::copy_from", "sizes differ", "1024 bytes", "4096 bytes",
                    "equal sizes, as in cuda.core"});
    expect_invalid([&] { kib.copy_to(four_kib, no_stream()); },
                   {"sizes differ", "1024 bytes", "4096 bytes"});
    Buffer closed = resource->allocate(64, no_stream());
    closed.close();
    expect_invalid([&] { closed.copy_to(no_stream()); }, {"Buffer::copy_to", "is closed"});
}

// cuda.core's set_deallocation_stream: close() without a stream, the last copy going, frees on
// the stream set, for every copy of the buffer; close(stream) still frees on its own stream.
TEST(BufferDeallocationStream, CloseFreesOnTheStreamSet) {
    auto resource = std::make_shared<HostMemoryResource>();
    const Stream producer = fake_stream(0x1000), consumer = fake_stream(0x2000);
    Buffer buffer = resource->allocate(64, producer);
    EXPECT_EQ(buffer.deallocation_stream().handle(), producer.handle());
    Buffer copy = buffer;
    buffer.set_deallocation_stream(consumer);
    EXPECT_EQ(copy.deallocation_stream().handle(), consumer.handle());
    EXPECT_FALSE(buffer.is_closed());  // still open and usable
    copy.close();
    EXPECT_TRUE(buffer.is_closed());
    EXPECT_EQ(resource->frees.load(), 1);
    EXPECT_EQ(resource->last_free_stream.load(), consumer.handle());
}

TEST(BufferDeallocationStream, TheLastCopyGoingFreesOnTheStreamSet) {
    auto resource = std::make_shared<HostMemoryResource>();
    const Stream producer = fake_stream(0x1000), consumer = fake_stream(0x2000);
    {
        Buffer buffer = resource->allocate(64, producer);
        buffer.set_deallocation_stream(consumer);
    }
    EXPECT_EQ(resource->frees.load(), 1);
    EXPECT_EQ(resource->last_free_stream.load(), consumer.handle());
}

TEST(BufferDeallocationStream, CloseWithAStreamStillFreesOnThatStream) {
    auto resource = std::make_shared<HostMemoryResource>();
    Buffer buffer = resource->allocate(64, fake_stream(0x1000));
    buffer.set_deallocation_stream(fake_stream(0x2000));
    const Stream other = fake_stream(0x3000);
    buffer.close(other);
    EXPECT_EQ(resource->last_free_stream.load(), other.handle());
}

// The buffer holds the stream it will be freed on: the caller may close and drop its Stream.
TEST(BufferDeallocationStream, HoldsTheStreamUntilTheFree) {
    auto resource = std::make_shared<HostMemoryResource>();
    Buffer buffer = resource->allocate(64, fake_stream(0x1000));
    Stream consumer = fake_stream(0x2000);
    const std::weak_ptr<cudacore::detail::StreamBox> held = cudacore::detail::box_of(consumer);
    buffer.set_deallocation_stream(consumer);
    consumer.close();
    consumer = fake_stream(0x4000);
    EXPECT_FALSE(held.expired());
    EXPECT_EQ(buffer.deallocation_stream().handle(), reinterpret_cast<CUstream>(0x2000));
    buffer.close();
    EXPECT_TRUE(held.expired());
    EXPECT_EQ(resource->last_free_stream.load(), reinterpret_cast<CUstream>(0x2000));
}

TEST(BufferDeallocationStream, ClosedBufferOrStreamIsRefused) {
    auto resource = std::make_shared<HostMemoryResource>();
    Buffer buffer = resource->allocate(64, no_stream());
    EXPECT_EQ(buffer.deallocation_stream().handle(), nullptr);  // none recorded
    Stream closed_stream = fake_stream(0x2000);
    closed_stream.close();
    expect_invalid([&] { buffer.set_deallocation_stream(closed_stream); },
                   {"Buffer::set_deallocation_stream", "stream 0x2000", "is closed"});
    buffer.close();
    expect_invalid([&] { buffer.set_deallocation_stream(fake_stream(0x1000)); },
                   {"Buffer::set_deallocation_stream", "is closed"});
    expect_invalid([&] { (void)buffer.deallocation_stream(); },
                   {"Buffer::deallocation_stream", "is closed"});
    expect_invalid([&] { Buffer().set_deallocation_stream(fake_stream(0x1000)); },
                   {"has no memory"});
}

TEST(Buffer, NullHostPointersAreRejected) {
    auto resource = std::make_shared<HostMemoryResource>();
    Buffer buffer = resource->allocate(8, no_stream());
    expect_invalid([&] { buffer.copy_from(static_cast<const void*>(nullptr), 8, no_stream()); },
                   {"null host pointer", "8 bytes"});
    expect_invalid([&] { buffer.copy_to(static_cast<void*>(nullptr), 8, no_stream()); },
                   {"null host pointer", "8 bytes"});
}

TEST(Buffer, Fill32NeedsAMultipleOfFourBytes) {
    auto resource = std::make_shared<HostMemoryResource>();
    Buffer buffer = resource->allocate(6, no_stream());
    expect_invalid([&] { buffer.fill_uint32(0xdeadbeef, no_stream()); },
                   {"fill_uint32", "6 bytes", "multiple of 4"});
}

// As in cuda.core, allocate(0) gives an empty buffer of that resource, not an error.
TEST(Buffer, AllocateZeroGivesAnEmptyBufferOfTheResource) {
    auto resource = std::make_shared<HostMemoryResource>();
    Buffer empty = resource->allocate(0, no_stream());
    EXPECT_EQ(resource->allocations.load(), 0) << "nothing allocated";
    EXPECT_FALSE(empty.is_closed());
    EXPECT_EQ(empty.size(), 0u);
    EXPECT_EQ(empty.handle(), 0u);
    EXPECT_EQ(empty.memory_resource(), resource);
    EXPECT_TRUE(empty.is_host_accessible());
    EXPECT_EQ(empty.bytes().size(), 0u);
    // Copies and fills of nothing do nothing (no driver is asked).
    Buffer other = resource->allocate(0, no_stream());
    empty.copy_from(other, no_stream());
    std::vector<char> none;
    char host = 0;
    empty.copy_to(&host, 0, no_stream());
    empty.copy_from(none, no_stream());
    empty.fill_byte(1, no_stream());
    empty.fill_uint32(1, no_stream());
    EXPECT_NE(empty.description().find("empty buffer of 0 bytes"), std::string::npos)
        << empty.description();
    empty.close();
    EXPECT_TRUE(empty.is_closed());
    EXPECT_EQ(empty.memory_resource(), nullptr);
    EXPECT_EQ(resource->frees.load(), 0) << "nothing freed";
}

TEST(Buffer, NullHandlesAndZeroSizedHandlesAreRejected) {
    auto resource = std::make_shared<HostMemoryResource>();
    expect_invalid([&] { Buffer::from_handle(CUdeviceptr{0}, 16, resource); },
                   {"null pointer", "16"});
    int value = 0;
    expect_invalid([&] { Buffer::from_handle(&value, 0, resource); }, {"size 0"});
    expect_invalid([&] { Buffer::wrap_unowned(&value, 0, resource); }, {"size 0"});
    expect_invalid([&] { Buffer::from_handle(&value, 4, nullptr); },
                   {"no memory resource", "wrap_unowned"});
    expect_invalid([&] { Buffer::from_handle(&value, 4, resource, std::shared_ptr<void>()); },
                   {"null owner"});
    expect_invalid([&] { Buffer::from_handle(&value, 4, resource, Buffer::Deleter()); },
                   {"empty deleter"});
}

TEST(Buffer, ResourceNotOwnedBySharedPtrIsRejected) {
    HostMemoryResource on_stack;
    expect_invalid([&] { on_stack.allocate(8, no_stream()); }, {"std::shared_ptr"});
    EXPECT_EQ(on_stack.allocations.load(), 0);
}

TEST(Buffer, WrapUnownedNeverFreesAndKeepsTheResource) {
    auto resource = std::make_shared<HostMemoryResource>();
    std::vector<std::uint32_t> memory(4, 7);
    {
        Buffer wrapped = Buffer::wrap_unowned(memory.data(), 16, resource);
        EXPECT_FALSE(wrapped.owns_memory());
        EXPECT_EQ(wrapped.data(), memory.data());
        EXPECT_TRUE(wrapped.is_host_accessible());
        EXPECT_EQ(wrapped.span<std::uint32_t>()[3], 7u);
        wrapped.close();
        EXPECT_TRUE(wrapped.is_closed());
    }
    { Buffer dropped = Buffer::wrap_unowned(memory.data(), 16, resource); }
    EXPECT_EQ(resource->frees.load(), 0);
    EXPECT_EQ(memory[0], 7u);
}

// As in cuda.core, from_handle(ptr, size, resource) hands the memory to the resource.
TEST(Buffer, FromHandleHandsTheMemoryToTheResource) {
    auto resource = std::make_shared<HostMemoryResource>();
    // Memory the resource's kind allocated outside a Buffer (HostMemoryResource frees with
    // operator delete).
    const int frees_before = resource->frees.load();
    void* memory = ::operator new(32);
    {
        Buffer handed = Buffer::from_handle(memory, 32, resource);
        EXPECT_TRUE(handed.owns_memory());
        EXPECT_EQ(handed.memory_resource(), resource);
        Buffer copy = handed;
        { Buffer gone = std::move(handed); }
        EXPECT_EQ(resource->frees.load(), frees_before) << "freed before the last copy went";
    }
    EXPECT_EQ(resource->frees.load(), frees_before + 1) << "freed by the resource, once";

    void* closed_memory = ::operator new(16);
    Buffer closed = Buffer::from_handle(closed_memory, 16, resource);
    closed.close();
    EXPECT_EQ(resource->frees.load(), frees_before + 2);
    EXPECT_EQ(closed.memory_resource(), nullptr) << "a closed buffer reports no resource";
    EXPECT_FALSE(closed.owns_memory());
}

TEST(Buffer, FromHandleWithAnOwnerKeepsItUntilTheLastCopyOrClose) {
    auto resource = std::make_shared<HostMemoryResource>();
    auto storage = std::make_shared<std::vector<char>>(128, 'x');
    std::weak_ptr<std::vector<char>> watch = storage;
    {
        Buffer buffer = Buffer::from_handle(storage->data(), storage->size(), resource, storage);
        storage.reset();
        EXPECT_FALSE(watch.expired()) << "the buffer keeps its owner";
        EXPECT_TRUE(buffer.owns_memory());
        EXPECT_EQ(buffer.bytes()[5], std::byte{'x'});
        Buffer copy = buffer;
        buffer = Buffer();
        EXPECT_FALSE(watch.expired());
    }
    EXPECT_TRUE(watch.expired()) << "dropped with the last copy";
    EXPECT_EQ(resource->frees.load(), 0) << "the resource only describes the memory";

    auto second = std::make_shared<std::vector<char>>(8);
    watch = second;
    char* second_data = second->data();
    Buffer closed = Buffer::from_handle(second_data, 8, resource, std::move(second));
    closed.close();
    EXPECT_TRUE(watch.expired()) << "dropped at close()";
}

TEST(Buffer, FromHandleWithADeleterCallsItOnce) {
    auto resource = std::make_shared<HostMemoryResource>();
    int calls = 0;
    void* seen = nullptr;
    std::size_t seen_size = 0;
    void* memory = ::operator new(48);
    {
        Buffer buffer = Buffer::from_handle(memory, 48, resource,
                                            [&](CUdeviceptr pointer, std::size_t size) {
                                                ++calls;
                                                seen = reinterpret_cast<void*>(pointer);
                                                seen_size = size;
                                                ::operator delete(seen);
                                            });
        Buffer copy = buffer;
        EXPECT_EQ(calls, 0);
    }
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(seen, memory);
    EXPECT_EQ(seen_size, 48u);

    // A failing deleter: close() reports it, the buffer is closed all the same, never called
    // again.
    Buffer failing = Buffer::from_handle(&calls, sizeof calls, resource,
                                         [&](CUdeviceptr, std::size_t) {
                                             ++calls;
                                             throw std::runtime_error("deleter failed");
                                         });
    EXPECT_THROW(failing.close(), std::runtime_error);
    EXPECT_TRUE(failing.is_closed());
    failing.close();
    EXPECT_EQ(calls, 2);
    EXPECT_EQ(resource->frees.load(), 0);
}

TEST(Buffer, MemoryBoundToNoDeviceReportsMinusOne) {
    auto resource = std::make_shared<HostMemoryResource>(true, /*device_ordinal=*/-1);
    Buffer buffer = resource->allocate(8, no_stream());
    EXPECT_EQ(buffer.device_ordinal(), -1);
    expect_invalid([&] { (void)buffer.device(); }, {"bound to no device", "8 bytes"});
    expect_invalid([&] { (void)resource->device(); }, {"bound to no device", "test host memory"});
    EXPECT_NE(buffer.description().find("on no device"), std::string::npos)
        << buffer.description();
}

// allocate() asks a resource what it is once and keeps the answer: every later buffer still
// carries the resource's own ordinal and accessibility.
TEST(Buffer, EveryBufferCarriesItsResourcesOrdinalAndAccessibility) {
    auto seventh = std::make_shared<HostMemoryResource>(/*host_accessible=*/false, 7);
    auto host = std::make_shared<HostMemoryResource>(/*host_accessible=*/true, 0);
    for (int i = 0; i < 3; ++i) {
        Buffer on_seventh = seventh->allocate(16, no_stream());
        EXPECT_EQ(on_seventh.device_ordinal(), 7);
        EXPECT_FALSE(on_seventh.is_host_accessible());
        EXPECT_FALSE(on_seventh.is_device_accessible());
        Buffer on_host = host->allocate(16, no_stream());
        EXPECT_EQ(on_host.device_ordinal(), 0);
        EXPECT_TRUE(on_host.is_host_accessible());
        EXPECT_FALSE(on_host.is_device_accessible());
    }
}

TEST(Buffer, SpanViewsHostAccessibleMemory) {
    auto resource = std::make_shared<HostMemoryResource>();
    Buffer buffer = resource->allocate(32, no_stream());
    auto words = buffer.span<std::uint32_t>();
    ASSERT_EQ(words.size(), 8u);
    std::iota(words.begin(), words.end(), 1u);
    auto bytes = buffer.bytes();
    ASSERT_EQ(bytes.size(), 32u);
    std::uint32_t third = 0;
    std::memcpy(&third, bytes.data() + 8, 4);
    EXPECT_EQ(third, 3u);
    expect_invalid([&] { buffer.span<std::array<char, 5>>(); }, {"multiple of 5"});

    auto device_only = std::make_shared<HostMemoryResource>(/*host_accessible=*/false);
    Buffer hidden = device_only->allocate(8, no_stream());
    expect_invalid([&] { hidden.bytes(); }, {"not host accessible", "8 bytes"});
}

TEST(Buffer, CloseReportsAFailedFreeAndDestructionIgnoresIt) {
    auto resource = std::make_shared<HostMemoryResource>();
    resource->fail_to_free = true;
    Buffer buffer = resource->allocate(8, no_stream());
    EXPECT_THROW(buffer.close(), std::runtime_error);
    EXPECT_TRUE(buffer.is_closed()) << "closed even though freeing failed";
    {
        Buffer dropped = resource->allocate(8, no_stream());
    }  // destructor: the failure is swallowed
    EXPECT_EQ(resource->frees.load(), 2);
}

TEST(Buffer, DescriptionSaysWhatAndWhere) {
    auto resource = std::make_shared<HostMemoryResource>();
    Buffer buffer = resource->allocate(4096, no_stream());
    const std::string text = buffer.description();
    EXPECT_NE(text.find("buffer 0x"), std::string::npos) << text;
    EXPECT_NE(text.find("4096 bytes"), std::string::npos) << text;
    EXPECT_NE(text.find("test host memory"), std::string::npos) << text;
}

TEST(MemoryNoDriver, EveryMemoryEntryPointThrowsNoDriverError) {
    auto result = cudacore::test::run_process(
        {cudacore::test::helper_path("memory_no_driver_probe").string()},
        {{"CUDACORE_LIBCUDA_PATH", "/nonexistent/libcuda.so.1"}});
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_EQ(result.err, "");
    for (const char* entry :
         {"LegacyPinnedMemoryResource()", "ManagedMemoryResource()", "Buffer::wrap_unowned",
          "Buffer::from_handle(owner)",
          "Buffer::copy_from(host)", "Buffer::copy_to(host)", "Buffer::copy_from(Buffer)",
          "Buffer::fill_byte", "Buffer::fill_uint32", "Buffer::device", "prefetch_to_host"}) {
        EXPECT_NE(result.out.find(std::string(entry) + ": NoDriverError"), std::string::npos)
            << entry << "\n" << result.out;
    }
    EXPECT_NE(result.out.find("CUDACORE_LIBCUDA_PATH"), std::string::npos) << result.out;
    EXPECT_EQ(result.out.find("UNEXPECTED"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("buffers released"), std::string::npos) << result.out;
}

}  // namespace
