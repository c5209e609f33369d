/// @file
/// OwningHandle: what every owning object (Context, Stream, Event, Graph, GraphExec, CudaArray,
/// MipmappedArray, TextureObject, SurfaceObject, MemoryPool, VirtualAddressRange,
/// PhysicalAllocation, VirtualMemoryMapping) is made of, written once, and owning_names: the
/// names their errors use, with those of ObjectCode, Program and Linker (which keep the same
/// close() and reset() over states of their own).
///
/// An owning object is a handle to one driver resource. Its copies share one small state: the
/// resource's box (the driver handle, what it depends on, what its release needs), the driver
/// handle read once (what the hot calls use), and whether the resource was closed. The library's
/// own holders (a buffer freed on a stream, a launch still running, a graph holding an event, a
/// release deferred until streams are done) hold the box itself. So:
/// - close() ends the resource for every holder: this object and every copy of it then see it
///   closed (is_closed() true, handle() null, their calls throw InvalidArgumentError naming the
///   call and the object). The driver release runs at close() when nothing the library still runs
///   needs the resource, otherwise when those internal holders finish: never a dangling handle.
/// - reset() drops this object's share only (as std::shared_ptr::reset does); the resource is
///   released when its last holder goes.
/// docs/errors-and-lifetime.md, "Closing and resetting", is the whole contract.
#pragma once

#include "cudacore/forward.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

namespace cudacore {

class Context;
class CudaArray;
class Event;
class Graph;
class GraphExec;
class Linker;
class MemoryPool;
class MipmappedArray;
class PhysicalAllocation;
class Program;
class Stream;
class SurfaceObject;
class TextureObject;
class VirtualAddressRange;
class VirtualMemoryMapping;

/// What an owning type's errors call it and what it holds ("the Stream object is empty (moved
/// from or reset: it holds no stream)").
struct OwningNames {
    const char* type = nullptr;   ///< "Stream"
    const char* holds = nullptr;  ///< "stream"
};
/// The names of owning type `T`, one line per type.
template <class T>
inline constexpr OwningNames owning_names{};
#ifndef CUDACORE_DOXYGEN
template <> inline constexpr OwningNames owning_names<Context>{"Context", "context"};
template <> inline constexpr OwningNames owning_names<CudaArray>{"CudaArray", "array"};
template <> inline constexpr OwningNames owning_names<Event>{"Event", "event"};
template <> inline constexpr OwningNames owning_names<Graph>{"Graph", "graph"};
template <> inline constexpr OwningNames owning_names<GraphExec>{"GraphExec", "executable graph"};
template <> inline constexpr OwningNames owning_names<Linker>{"Linker", "link inputs"};
template <> inline constexpr OwningNames owning_names<MemoryPool>{"MemoryPool", "memory pool"};
template <> inline constexpr OwningNames owning_names<MipmappedArray>{"MipmappedArray", "mipmapped array"};
template <> inline constexpr OwningNames owning_names<ObjectCode>{"ObjectCode", "code"};
template <> inline constexpr OwningNames owning_names<PhysicalAllocation>{"PhysicalAllocation", "physical allocation"};
template <> inline constexpr OwningNames owning_names<Program>{"Program", "program"};
template <> inline constexpr OwningNames owning_names<Stream>{"Stream", "stream"};
template <> inline constexpr OwningNames owning_names<SurfaceObject>{"SurfaceObject", "surface"};
template <> inline constexpr OwningNames owning_names<TextureObject>{"TextureObject", "texture"};
template <> inline constexpr OwningNames owning_names<VirtualAddressRange>{"VirtualAddressRange", "address range"};
template <> inline constexpr OwningNames owning_names<VirtualMemoryMapping>{"VirtualMemoryMapping", "mapping"};
#endif  // CUDACORE_DOXYGEN

/// The part of OwningHandle that does not depend on the type (tells owning objects apart).
class OwningHandleBase {};

/// The owning handle of `Derived` (see the file comment): Box is its internal state, Raw its
/// driver handle. Copies share one state; moving leaves the source empty ("moved from").
template <class Derived, class Box, class Raw>
class OwningHandle : public OwningHandleBase {
public:
    /// The driver's handle, for the caller's own driver calls; valid while the object is open.
    /// Null (0) once closed (through this object or a copy), reset or moved from. One load;
    /// never throws.
    Raw handle() const noexcept { return raw_handle(); }
    /// Whether close() was called on this object or on any copy of it. Never throws.
    bool is_closed() const noexcept { return state_ && state_->closed; }
    /// Throws InvalidArgumentError naming `operation` and the object when it is closed ("launch:
    /// stream 0x... on device 0 is closed (Stream::close was called on it or on a copy)"). An
    /// empty object passes: where a call allows one, it stands for "none" (an allocation that
    /// needs no stream).
    void check_open(const char* operation) const {
        if (state_ && state_->closed) [[unlikely]] throw_unusable(operation);
    }
    /// check_open, and an empty object (moved from or reset) is refused too, saying so.
    void check_usable(const char* operation) const {
        if (!state_ || !state_->box) [[unlikely]] throw_unusable(operation);
    }
    /// Drops this object's share (as std::shared_ptr::reset does), leaving it empty as a
    /// moved-from object: the resource lives on while its copies or the library hold it. Never
    /// throws; release errors are ignored, as at destruction.
    void reset() noexcept { state_.reset(); }
    /// The same resource: the same driver handle (cudacore/identity.hpp says how each compares).
    friend bool operator==(const Derived& a, const Derived& b) noexcept {
        return a.raw_handle() == b.raw_handle();
    }

protected:

    /// What every copy shares.
    struct State {
        std::shared_ptr<Box> box;  ///< null once closed
        Raw handle{};              ///< the driver handle while open, for the hot calls
        bool closed = false;    ///< close() was called on one of the copies
        std::string closed_as;  ///< what it was, for the messages after close()
        /// Dropped with the box, at close() or when the last copy goes (Stream: its count of
        /// wrappers of a caller's stream).
        std::shared_ptr<void> companion;
    };

    /// An object of `box` (null: an empty object), with `handle` its driver handle. `Derived`
    /// declares no constructor: it is an aggregate of this base, which only made() can make, so
    /// that a user cannot make an empty one.
    static Derived adopt(std::shared_ptr<Box> box, Raw handle,
                         std::shared_ptr<void> companion = {}) {
        static_assert(std::is_aggregate_v<Derived>, "an owning type declares no constructor");
        return Derived{made(std::move(box), handle, std::move(companion))};
    }
    /// The base of adopt()'s object, for a type with constructors of its own (MemoryPool).
    static OwningHandle made(std::shared_ptr<Box> box, Raw handle,
                             std::shared_ptr<void> companion = {}) {
        OwningHandle object;
        if (box)
            object.state_ = std::make_shared<State>(
                State{std::move(box), handle, false, {}, std::move(companion)});
        return object;
    }

    /// The driver handle, null when closed or empty (handle() as the library reads it: a type
    /// whose handle() notes that the caller has it, Event, compares without noting).
    Raw raw_handle() const noexcept { return state_ ? state_->handle : Raw{}; }
    /// The box (null when closed or moved from). Never throws.
    const std::shared_ptr<Box>& box() const noexcept { return state_ ? state_->box : no_box_; }
    /// The box, for `operation`: InvalidArgumentError naming the operation and the object when
    /// closed or moved from.
    const std::shared_ptr<Box>& open_box(const char* operation) const {
        if (state_ && state_->box) [[likely]] return state_->box;
        throw_unusable(operation);
    }
    /// Throws the error open_box throws (closed, or moved from).
    [[noreturn]] void throw_unusable(const char* operation) const {
        if (state_ && state_->closed)
            detail::throw_closed_object_error(operation, state_->closed_as.c_str(),
                                              owning_names<Derived>.type);
        detail::throw_moved_from_error(operation, owning_names<Derived>.type,
                                       owning_names<Derived>.holds);
    }
    /// What the object was when closed ("stream 0x... on device 0"); empty while open.
    const std::string& closed_description() const noexcept {
        return state_ ? state_->closed_as : no_description_;
    }
    /// close(), for every holder: marks the shared state closed, remembers `description` for the
    /// messages, and drops the state's share of the box (see the file comment). Does nothing
    /// when closed or moved from. Throws DriverError when the release it makes fails (closed all
    /// the same).
    void close_as(std::string description) {
        if (!state_ || state_->closed) return;
        state_->closed_as = std::move(description);
        state_->closed = true;
        state_->handle = Raw{};
        std::shared_ptr<void> companion = std::move(state_->companion);
        std::shared_ptr<void> share = std::move(state_->box);
        detail::release_reporting(share);
    }

private:
    OwningHandle() noexcept = default;
    friend struct detail::BoxAccess;
    std::shared_ptr<State> state_;
    inline static const std::shared_ptr<Box> no_box_{};
    inline static const std::string no_description_{};
};

}  // namespace cudacore

// std::hash of every owning object: its driver handle, as its operator== compares.
#ifndef CUDACORE_DOXYGEN
template <class T>
    requires std::is_base_of_v<cudacore::OwningHandleBase, T>
struct std::hash<T> {
    /// The hash of handle(). Never throws.
    std::size_t operator()(const T& object) const noexcept {
        return std::hash<decltype(object.handle())>{}(object.handle());
    }
};
#endif  // CUDACORE_DOXYGEN
