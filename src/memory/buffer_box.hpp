// The box behind Buffer: the address, its size, what frees it (its resource, an owner or a
// deleter) and the stream it is freed on. Shared by every copy of a Buffer; released (memory
// freed, errors ignored) when the last copy goes, at close(), or by the exit handler when it is
// still alive as the process exits.
#pragma once

#include "cudacore/buffer.hpp"
#include "cudacore/memory_resource.hpp"
#include "loader/driver_api.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/spin_lock.hpp"

#include <cuda.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <type_traits>

namespace cudacore::detail {

struct BufferRelease;  // what a box frees, taken out of it (buffer.cpp)

struct BufferBox {
    CUdeviceptr handle = 0;  // 0 once closed, and for an empty buffer of size 0
    std::size_t size = 0;
    std::shared_ptr<MemoryResource> resource;  // null once closed, or made without a resource
    std::shared_ptr<StreamBox> free_stream;    // the stream it is freed on when the box goes
    // from_handle with an owner or a deleter (rare, so out of the box: allocate and release do
    // not initialise or move a std::function each).
    struct Foreign {
        std::shared_ptr<void> owner;  // dropped at release
        Buffer::Deleter deleter;      // called at release
    };
    std::unique_ptr<Foreign> foreign;
    int device_ordinal = 0;                    // -1: bound to no device (pinned host memory)
    bool device_accessible = false;
    bool host_accessible = false;
    bool owned = true;    // the resource frees the memory (false for wrap_unowned, owner, deleter)
    bool closed = false;  // close() ran (or the exit handler released it)

    // Links in the list of boxes with memory to free, which the exit handler walks (guarded by
    // that list's mutex).
    BufferBox* previous = nullptr;
    BufferBox* next = nullptr;
    std::atomic<bool> tracked{false};

    BufferBox() {}  // user-provided: not zeroed first by make_shared (every member is initialised)
    BufferBox(const BufferBox&) = delete;
    BufferBox& operator=(const BufferBox&) = delete;
    ~BufferBox();

    // Joins the exit handler's list when the box has something to free (call once the box is
    // filled in); arms the handler once the driver is loaded. Inline (below): every allocation
    // runs it.
    void track();

    // Frees the memory (through its resource on `stream`, else the box's own stream; its owner;
    // its deleter) and marks the box closed, even when freeing throws. Freeing happens once,
    // whoever comes first: close(), the last copy going, or the exit handler.
    void release(CUstream stream, bool use_stream);

    // Marks the box closed without freeing anything: its memory now belongs to another box
    // (VirtualMemoryResource::grow). Leaves the exit handler's list; drops the resource, stream,
    // owner and deleter it held.
    void hand_over() noexcept;

    // Frees what `release` holds, on `stream` for a resource; every step runs, the first error is
    // rethrown.
    static void free(BufferRelease& release, CUstream stream);
};

// Boxes with memory to free, so that an exit handler can free what is still alive when the
// process exits while the driver still works: the driver tears itself down from its own exit
// handler, registered when it was initialised, so static objects destroyed after that point could
// only leak. Handlers run in reverse order of registration: ours, registered once the driver is
// loaded (at the first buffer after that), runs before the driver's teardown. Never destroyed:
// boxes destroyed after main returns still unlink themselves.
struct LiveBuffers {
    SpinLock mutex;  // held for a few pointer updates (and once at exit, for the whole list)
    BufferBox* head = nullptr;
    std::atomic<bool> armed{false};
};

// Constant-initialised and trivially destructible (buffer.cpp): usable from any destructor at
// any point of exit, with no guard to test on each use (a function-local static would test one).
static_assert(std::is_trivially_destructible_v<LiveBuffers>);
extern constinit LiveBuffers live_buffer_list;

// Registers the exit handler, once (buffer.cpp).
void arm_exit_release(LiveBuffers& live) noexcept;

inline void BufferBox::track() {
    const bool needs_release = (owned && handle && resource) || foreign;
    if (!needs_release) return;
    LiveBuffers& live = live_buffer_list;
    {
        std::lock_guard lock(live.mutex);
        next = live.head;
        if (live.head) live.head->previous = this;
        live.head = this;
        tracked.store(true, std::memory_order_relaxed);
    }
    if (!live.armed.load(std::memory_order_relaxed) && driver_if_loaded()) [[unlikely]]
        arm_exit_release(live);
}

}  // namespace cudacore::detail
