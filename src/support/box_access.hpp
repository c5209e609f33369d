// The one way library code makes a public handle object (Kernel, Stream, Event, Context, Buffer)
// from its internal box: those constructors are private, so users cannot make an object from a
// box, and every public object is made by the factories that set its box up completely.
#pragma once

#include <memory>
#include <utility>

namespace cudacore::detail {

struct BoxAccess {
    template <class Object, class Box>
    static Object make(std::shared_ptr<Box> box) noexcept {
        return Object(std::move(box));
    }
    // For objects that count themselves in their box (Buffer): adopts the box's first reference.
    template <class Object, class Box>
    static Object adopt(Box* box) noexcept {
        return Object(box);
    }
};

}  // namespace cudacore::detail
