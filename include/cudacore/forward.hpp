/// @file
/// Declarations of the library's internal types and calls that the public headers name: the
/// owning objects' boxes, the one friend that reaches them, and the calls inline code makes (why:
/// docs/layout.md). Nothing here is for users.
#pragma once

#include <cstddef>
#include <memory>

namespace cudacore {

class Device;
class MemoryResource;
class ObjectCode;

namespace detail {

// The boxes: each owning object's shared internal state (defined in src/).
struct ArrayBox;
struct ContextBox;
struct EventBox;
struct GraphBox;
struct GraphExecBox;
struct GraphicsResourceBox;
struct GreenContextBox;
struct KernelBox;
struct MemoryPoolBox;
struct MipmappedArrayBox;
struct PhysicalAllocationBox;
struct StreamBox;
struct SurfaceBox;
struct TextureBox;
struct VirtualAddressRangeBox;
struct VirtualMemoryMappingBox;
struct BufferBox;
struct ImportedPool;
struct CachingCore;
struct ObjectCodeState;
struct ObjectCodeHolder;
struct ProgramKeyMemoSlot;
class LaunchStreams;

// The library's one door into the boxes, and the types' own doors where they need more.
struct BoxAccess;
struct ObjectCodeAccess;
struct ProgramInternals;

// Called by inline code of the public headers; defined in src/.
/// InvalidArgumentError: a closed (or empty) Buffer given to launch().
[[noreturn]] void throw_closed_buffer_argument();
/// InvalidArgumentError "OPERATION: OBJECT is closed (TYPE::close was called on this object)".
[[noreturn]] void throw_closed_object_error(const char* operation, const char* object,
                                            const char* type);
/// InvalidArgumentError "OPERATION: the TYPE object was moved from (it holds no WHAT)".
[[noreturn]] void throw_moved_from_error(const char* operation, const char* type, const char* what);
/// Drops the last share of a box at close(), throwing the release's errors as DriverError.
void release_reporting(std::shared_ptr<void>& share);
/// Marks a resource that lives as long as the process: its buffers do not count references to it.
void keep_for_the_process(MemoryResource& resource) noexcept;
/// Marks a device's default resource, which close() refuses (the whole process shares it).
void mark_device_default(MemoryResource& resource) noexcept;
/// The value hash of an ObjectCode (cached in its shared state).
std::size_t object_code_hash(const ObjectCode& code) noexcept;

}  // namespace detail
}  // namespace cudacore
