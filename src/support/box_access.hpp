// The one way library code reaches the internals of a public handle object: those objects show
// their contract only, so their constructors from a box and their boxes are private, and this
// friend of theirs is the door. Users cannot make an object from a box (every public object is
// made by the factories that set its box up completely) nor reach one; tests that check
// internals use it as the library does.
#pragma once

#include "cudacore/owning_handle.hpp"
#include "support/thread_block_pool.hpp"

#include <memory>
#include <type_traits>
#include <utility>

namespace cudacore::detail {

struct BoxAccess {
    // A new public object over `box` (an OwningHandle: a new shared state, so its copies, not
    // other objects of the same box, see its close()). A box that says so gets a companion, kept
    // as long as the public objects of that state (a Stream counts the wrappers of a caller's
    // stream).
    template <class Object, class Box>
    static Object make(std::shared_ptr<Box> box) {
        if constexpr (std::is_base_of_v<OwningHandleBase, Object>) {
            if (!box) return Object::adopt(nullptr, {});
            auto handle = box->handle;
            // The shared state from this thread's pool: objects made and dropped in a loop (a
            // capture's Graph and GraphExec, an Event) cost no malloc and free for it.
            std::shared_ptr<void> companion;
            if constexpr (requires { public_companion(box); }) companion = public_companion(box);
            return Object::adopt(std::move(box), handle, std::move(companion), ThreadBlockPool<void*>());
        } else {
            return Object(std::move(box));
        }
    }
    // An empty object of an owning type (as after a move): for the library's "none" values and
    // for tests of what an empty object does. Needs no complete box type.
    template <class Object>
    static Object empty() noexcept {
        return Object::adopt(nullptr, {});
    }
    // For objects that count themselves in their box (Buffer): adopts the box's first reference.
    template <class Object, class Box>
    static Object adopt(Box* box) noexcept {
        return Object(box);
    }
    // The box of an object (Context, Stream, Event, Kernel, Graph, GraphExec, the arrays,
    // surfaces and textures: a shared_ptr, null when moved from; Buffer: its counted box, null
    // for an empty buffer).
    template <class Object>
    static const auto& box(const Object& object) noexcept {
        if constexpr (std::is_base_of_v<OwningHandleBase, Object>)
            return object.box();
        else
            return object.box_;
    }
    // The box of an object that `operation` needs open: throws InvalidArgumentError naming the
    // operation and the object when it was closed or moved from (the types with close()).
    template <class Object>
    static const auto& open_box(const Object& object, const char* operation) {
        return object.open_box(operation);
    }
    // The primary context a memory resource allocates in, held for its lifetime
    // (DeviceMemoryResource, PinnedMemoryPoolResource, SynchronousMemoryResource).
    template <class Resource>
    static const auto& context(const Resource& resource) noexcept {
        return resource.context_;
    }
};

// BoxAccess::box, shorter at the call sites: box_of(stream)->context.
template <class Object>
const auto& box_of(const Object& object) noexcept {
    return BoxAccess::box(object);
}

// BoxAccess::open_box, shorter at the call sites: open_box_of(event, "Stream::record")->handle.
template <class Object>
const auto& open_box_of(const Object& object, const char* operation) {
    return BoxAccess::open_box(object, operation);
}

}  // namespace cudacore::detail
