/// @file
/// OwningHandle: what every owning object (Context, Stream, Event, Graph, GraphExec, CudaArray,
/// MipmappedArray, TextureObject, SurfaceObject, MemoryPool, VirtualAddressRange,
/// PhysicalAllocation, VirtualMemoryMapping) is made of; owning_names, the names their errors and
/// those of ObjectCode, Program and Linker use; and the names of the internal state the public
/// types hold (why: docs/layout.md). Contract: docs/errors-and-lifetime.md, "Closing and resetting".
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

namespace cudacore {

// The types owning_names names, and those the internal declarations below take.
class Context; class CudaArray; class Device; class Event; class Graph; class GraphExec;
class Linker; class MemoryPool; class MemoryResource; class MipmappedArray; class ObjectCode;
class PhysicalAllocation; class Program; class Stream; class SurfaceObject; class TextureObject;
class VirtualAddressRange; class VirtualMemoryMapping;

namespace detail {
// The boxes: each public object's shared internal state (defined in src/, not for users).
struct ArrayBox; struct BufferBox; struct CachingCore; struct ContextBox; struct EventBox;
struct GraphBox; struct GraphExecBox; struct GraphicsResourceBox; struct GreenContextBox;
struct ImportedPool; struct KernelBox; struct MemoryPoolBox; struct MipmappedArrayBox;
struct ObjectCodeHolder; struct ObjectCodeState; struct PhysicalAllocationBox;
struct ProgramKeyMemoSlot; struct StreamBox; struct SurfaceBox; struct TextureBox;
struct VirtualAddressRangeBox; struct VirtualMemoryMappingBox; class LaunchStreams;
// The library's one door into the boxes, and the types' own doors where they need more.
struct BoxAccess; struct MemoryResourceAccess; struct ObjectCodeAccess; struct ProgramInternals;
/// InvalidArgumentError "OPERATION: OBJECT is closed (TYPE::close was called on this object)".
[[noreturn]] void throw_closed_object_error(const char* operation, const char* object, const char* type);
/// InvalidArgumentError "OPERATION: the TYPE object was moved from (it holds no WHAT)".
[[noreturn]] void throw_moved_from_error(const char* operation, const char* type, const char* what);
/// Drops the last share of a box at close(), throwing the release's errors as DriverError.
void release_reporting(std::shared_ptr<void>& share);
}  // namespace detail

/// What an owning type's errors call it ("Stream") and what it holds ("stream").
struct OwningNames {
    const char* type = nullptr;   ///< the type's name
    const char* holds = nullptr;  ///< what an object holds
};
/// The names of owning type `T`.
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

/// The owning handle of `Derived`: Box is its internal state, Raw its driver handle. Copies share
/// one state; moving leaves the source empty. Nothing here throws unless it says so.
template <class Derived, class Box, class Raw>
class OwningHandle : public OwningHandleBase {
public:
    /// The driver's handle; null once closed (through any copy), reset or moved from.
    Raw handle() const noexcept { return raw_handle(); }
    /// Whether close() was called on this object or on any copy of it.
    bool is_closed() const noexcept { return state_ && state_->closed; }
    /// InvalidArgumentError naming `operation` when closed (an empty object passes).
    void check_open(const char* operation) const {
        if (state_ && state_->closed) [[unlikely]] throw_unusable(operation);
    }
    /// check_open, refusing an empty object (moved from or reset) too.
    void check_usable(const char* operation) const {
        if (!state_ || !state_->box) [[unlikely]] throw_unusable(operation);
    }
    /// Drops this object's share, leaving it empty; release errors are ignored.
    void reset() noexcept { state_.reset(); }
    /// The same resource: the same driver handle.
    friend bool operator==(const Derived& a, const Derived& b) noexcept {
        return a.raw_handle() == b.raw_handle();
    }

protected:
    /// What every copy shares.
    struct State {
        /// Made in place in its shared block.
        State(std::shared_ptr<Box> made_box, Raw made_handle, std::shared_ptr<void> made_companion) noexcept
            : box(std::move(made_box)), handle(made_handle), companion(std::move(made_companion)) {}
        std::shared_ptr<Box> box;  ///< null once closed
        Raw handle{};              ///< the driver handle while open, for the hot calls
        bool closed = false;    ///< close() was called on one of the copies
        std::string closed_as;  ///< what it was, for the messages after close()
        std::shared_ptr<void> companion;  ///< dropped with the box (Stream: its wrapper count)
    };

    /// An object of `box` (null: empty) with driver handle `handle`, its shared state from
    /// `allocator` (the library's per-thread pool); `Derived` is an aggregate.
    template <class Allocator = std::allocator<State>>
    static Derived adopt(std::shared_ptr<Box> box, Raw handle, std::shared_ptr<void> companion = {},
                         const Allocator& allocator = {}) {
        static_assert(std::is_aggregate_v<Derived>, "an owning type declares no constructor");
        return Derived{made(std::move(box), handle, std::move(companion), allocator)};
    }
    /// The base of adopt()'s object, for a type with constructors of its own (MemoryPool).
    template <class Allocator = std::allocator<State>>
    static OwningHandle made(std::shared_ptr<Box> box, Raw handle, std::shared_ptr<void> companion = {},
                             const Allocator& allocator = {}) {
        OwningHandle object;
        if (box)
            object.state_ = std::allocate_shared<State>(allocator, std::move(box), handle, std::move(companion));
        return object;
    }

    /// The driver handle, null when closed or empty.
    Raw raw_handle() const noexcept { return state_ ? state_->handle : Raw{}; }
    /// The box (null when closed or moved from).
    const std::shared_ptr<Box>& box() const noexcept { return state_ ? state_->box : no_box_; }
    /// The box; InvalidArgumentError naming `operation` and the object when closed or empty.
    const std::shared_ptr<Box>& open_box(const char* operation) const {
        if (state_ && state_->box) [[likely]] return state_->box;
        throw_unusable(operation);
    }
    /// Throws the error open_box throws.
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
    /// close() for every copy, keeping `description`. DriverError (closed all the same).
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
    /// The hash of handle().
    std::size_t operator()(const T& object) const noexcept {
        return std::hash<decltype(object.handle())>{}(object.handle());
    }
};
#endif  // CUDACORE_DOXYGEN
