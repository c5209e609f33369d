// The box behind Buffer: the address, its size, what frees it (its resource, an owner or a
// deleter) and the stream it is freed on. Shared by every copy of a Buffer, which count
// themselves in it (BufferBoxCount, buffer.hpp); released (memory freed, errors ignored) when the
// last copy goes, at close(), or by the exit handler when it is still alive as the process exits.
//
// Boxes live in slabs that are never freed (buffer_box_arena.cpp) and are reused through a free
// list per thread. That is what lets the exit handler find every box with memory to free without
// a shared list that each allocation and free would join and leave under a lock: it walks the
// slabs, and a box's `state` says, with one atomic exchange, who frees its memory.
#pragma once

#include "cudacore/buffer.hpp"
#include "cudacore/memory_resource.hpp"
#include "loader/driver_api.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"
#include "support/thread_exit.hpp"
#include "support/tls_address.hpp"

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>

namespace cudacore::detail {

struct BufferRelease;  // what a box frees, taken out of it (buffer.cpp)

struct alignas(64) BufferBox : BufferBoxCount {  // lines of its own: no false sharing of counts
    // kLive: memory to free. Whoever claims it first (close(), the last copy, the exit handler)
    // holds kTaking while it takes the fields out, then leaves kNothingToFree and frees, once.
    static constexpr std::uint8_t kNothingToFree = 0, kLive = 1, kTaking = 2;
    std::atomic<std::uint8_t> state{kNothingToFree};
    bool owned = true;    // the resource frees the memory (false for wrap_unowned, owner, deleter)
    bool closed = false;  // close() ran (or the exit handler released it)
    bool device_accessible = false;
    bool host_accessible = false;
    int device_ordinal = 0;  // -1: bound to no device (pinned host memory)
    CUdeviceptr handle = 0;  // 0 once closed, and for an empty buffer of size 0
    std::size_t size = 0;
    std::shared_ptr<MemoryResource> resource;  // null once closed, or made without a resource
    std::shared_ptr<StreamBox> free_stream;    // the stream it is freed on when the box goes
    // from_handle with an owner or a deleter, and what a view keeps alive (rare, so out of the
    // box: allocate and release do not initialise or move a std::function each).
    struct Foreign {
        std::shared_ptr<void> owner;   // dropped at release (it frees the memory)
        Buffer::Deleter deleter;       // called at release
        std::shared_ptr<void> anchor;  // dropped at close: frees nothing (a global's library)
        bool frees_memory() const noexcept { return owner || deleter; }
    };
    std::unique_ptr<Foreign> foreign;
    // A slice (buffer_slice.hpp): the box of the allocation it is part of, one of whose
    // references it holds until it is closed or dropped. Null for every other box.
    BufferBox* parent = nullptr;
    BufferBox* next_free = nullptr;  // the next box of a free list

    BufferBox() {}  // user-provided: not zeroed first (every member is initialised)
    BufferBox(const BufferBox&) = delete;
    BufferBox& operator=(const BufferBox&) = delete;

    // Open: not closed, and for a slice, its owner not closed either (the owner's close() frees
    // the memory under every slice of it).
    bool is_open() const noexcept { return !closed && !(parent && parent->closed); }

    // Whether the box holds memory to free (once it is filled in).
    bool needs_release() const noexcept {
        return (owned && handle && resource) || (foreign && foreign->frees_memory());
    }

    // Marks the box as holding memory to free, when it does (call once it is filled in), so that
    // the last copy, close() or the exit handler frees it; arms that handler once the driver is
    // loaded. Inline (below): every allocation runs it.
    void track() noexcept;

    // Takes the right to free the memory: true for exactly one caller, which takes the fields
    // out and then calls taken(). False when there is nothing (left) to free; if another caller
    // is taking the fields out, returns once it is done, so that the fields may be touched.
    bool claim() noexcept {
        if (state.load(std::memory_order_acquire) == kNothingToFree) return false;
        const std::uint8_t seen = state.exchange(kTaking, std::memory_order_acq_rel);
        if (seen == kLive) [[likely]] return true;
        if (seen == kNothingToFree) state.store(kNothingToFree, std::memory_order_release);
        else wait_while_taken();
        return false;
    }
    void taken() noexcept { state.store(kNothingToFree, std::memory_order_release); }
    void wait_while_taken() const noexcept;

    // Buffer::close: frees the memory (through free_on_request with its resource on
    // `stream`, else the box's own stream; its owner; its deleter) and marks the box closed, even
    // when freeing throws. Freeing happens once, whoever comes first: close(), the last copy
    // going, or the exit handler.
    void release(const std::shared_ptr<StreamBox>& stream, bool use_stream);

    // Marks the box closed without freeing anything: its memory now belongs to another box
    // (VirtualMemoryResource::grow). Drops the resource, stream, owner and deleter it held.
    void hand_over() noexcept;

    // Frees what `release` holds, on `stream` for a resource (free_on_request when
    // `on_request`, for close(); else do_deallocate); every step runs, the first error is
    // rethrown.
    static void free(BufferRelease& release, const std::shared_ptr<StreamBox>& stream,
                     bool on_request);

    // Once memory of `resource` is freed (queued) on `stream`: a resource that destroys its pool
    // notes the stream (MemoryResource::free_streams_), and for a stream the caller owns whose
    // wrappers are gone, marks the end of that free (refresh_end_of_work).
    static void note_free_stream(MemoryResource& resource, const std::shared_ptr<StreamBox>& stream);
};

// This thread's free boxes: constant-initialised, trivially destructible TLS, so
// usable from any destructor at any point of thread or process exit.
struct BufferBoxCache {
    static constexpr int kKept = 64;
    BufferBox* head = nullptr;
    int count = 0;
    std::uint8_t state = kSlotUnused;  // a ThreadSlot: live once registered for thread exit
};
inline BufferBoxCache& buffer_box_cache() noexcept {
    static thread_local BufferBoxCache cache;
    return tls_address(cache);
}

// The slow paths of the arena (buffer_box_arena.cpp): refill this thread's cache from the boxes
// other threads gave back, or from a new slab; give a box back when this thread's cache is full
// or gone.
BufferBox* take_buffer_box_slow();
void give_back_buffer_box_slow(BufferBox* box) noexcept;
// Calls `visit(box)` for every box of every slab (the exit handler; boxes free or in use).
void for_each_buffer_box(void (*visit)(BufferBox&) noexcept) noexcept;

// Whether the exit handler is registered; registers it once (buffer.cpp).
extern constinit std::atomic<bool> buffer_exit_release_armed;
void arm_buffer_exit_release() noexcept;

// A new, empty box with one reference.
inline BufferBox* take_buffer_box() {
    BufferBoxCache& cache = buffer_box_cache();
    BufferBox* box = cache.head;
    if (box) [[likely]] {
        cache.head = box->next_free;
        --cache.count;
    } else {
        box = take_buffer_box_slow();
    }
    box->references.store(1, std::memory_order_relaxed);
    return box;
}

// Empties a box nobody refers to any more (its memory freed or handed over) and keeps it for reuse.
inline void give_back_buffer_box(BufferBox* box) noexcept {
    // As a new box: every field to its initial value.
    box->owned = true;
    box->closed = false;
    box->device_accessible = false;
    box->host_accessible = false;
    box->device_ordinal = 0;
    box->handle = 0;
    box->size = 0;
    box->resource.reset();
    box->free_stream.reset();
    box->foreign.reset();
    box->parent = nullptr;  // its reference already dropped (drop_buffer_box, release)
    BufferBoxCache& cache = buffer_box_cache();
    if (cache.state == kSlotLive && cache.count < BufferBoxCache::kKept) [[likely]] {
        box->next_free = cache.head;
        cache.head = box;
        ++cache.count;
        return;
    }
    give_back_buffer_box_slow(box);
}

// Owns a box being filled in: gives it back (freeing nothing: it is not tracked yet) if filling
// it in throws; make_buffer hands it to a Buffer.
class BufferBoxPtr {
public:
    BufferBoxPtr() : box_(take_buffer_box()) {}
    BufferBoxPtr(const BufferBoxPtr&) = delete;
    BufferBoxPtr& operator=(const BufferBoxPtr&) = delete;
    ~BufferBoxPtr() {
        if (box_) drop_buffer_box(box_);
    }
    BufferBox* operator->() const noexcept { return box_; }
    BufferBox& operator*() const noexcept { return *box_; }
    BufferBox* release() noexcept { return std::exchange(box_, nullptr); }

private:
    BufferBox* box_;
};

inline Buffer make_buffer(BufferBoxPtr& box) noexcept {
    return BoxAccess::adopt<Buffer>(static_cast<BufferBoxCount*>(box.release()));
}

// The box of a buffer (null for an empty one).
inline BufferBox* box_of(const Buffer& buffer) noexcept {
    return static_cast<BufferBox*>(BoxAccess::box(buffer));
}

// A buffer as something a graph holds: keeps the memory alive while held, and points at the box,
// so that holdings keep one per box.
inline std::shared_ptr<const void> holding_of(const Buffer& buffer) {
    return std::shared_ptr<const void>(std::make_shared<const Buffer>(buffer), box_of(buffer));
}

inline void BufferBox::track() noexcept {
    if (!needs_release()) return;
    state.store(kLive, std::memory_order_release);
    if (!buffer_exit_release_armed.load(std::memory_order_relaxed) && driver_if_loaded())
        [[unlikely]]
        arm_buffer_exit_release();
}

}  // namespace cudacore::detail
