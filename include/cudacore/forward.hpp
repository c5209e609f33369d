/// @file
/// Declarations of the library's internal types and calls that the public headers name.
///
/// Why this header exists: a public object shows its contract only, so what it holds (its "box":
/// the driver handle, what the handle depends on, what its release needs) is defined in src/ and
/// only declared here, with the one friend that reaches it (detail::BoxAccess) and the few
/// out-of-line calls that inline code of the public headers makes. Keeping every such declaration
/// in one place lets the other public headers stay out of `namespace detail` (as cudax keeps its
/// forward declarations in one header). Nothing here is for users.
#pragma once

#include <cstddef>
#include <memory>

namespace cudacore {

class Device;
class MemoryResource;
class ObjectCode;

namespace detail {

// The boxes: each owning object's shared internal state (src/<layer>/..._box.hpp and the like).
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
struct PhysicalAllocationBox;  // src/memory/vmm/virtual_memory_boxes.hpp, as the next two
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

// The library's one door into the objects above (src/support/box_access.hpp), and the types'
// own doors where they need more than their box.
struct BoxAccess;
struct ObjectCodeAccess;
struct ProgramInternals;

// Called by inline code of the public headers; defined in src/.
/// Throws InvalidArgumentError: a closed (or empty) Buffer given to launch().
[[noreturn]] void throw_closed_buffer_argument();
/// InvalidArgumentError "OPERATION: OBJECT is closed (TYPE::close was called on this object)".
[[noreturn]] void throw_closed_object_error(const char* operation, const char* object,
                                            const char* type);
/// InvalidArgumentError "OPERATION: the TYPE object was moved from (it holds no WHAT)".
[[noreturn]] void throw_moved_from_error(const char* operation, const char* type, const char* what);
/// Drops `share` (the last public share of a box, at close()) on this thread; when that was the
/// last share, the release's driver errors, which a destructor only warns about, are thrown as
/// DriverError.
void release_reporting(std::shared_ptr<void>& share);
/// Marks a resource that lives as long as the process (a device's default resources): its buffers
/// point at it without counting references.
void keep_for_the_process(MemoryResource& resource) noexcept;
/// Marks a device's default resource, which close() refuses (the whole process shares it).
void mark_device_default(MemoryResource& resource) noexcept;
/// The value hash of an ObjectCode (cached in its shared state).
std::size_t object_code_hash(const ObjectCode& code) noexcept;

}  // namespace detail
}  // namespace cudacore
