// Over 200 lines: one class, ObjectCode, with a from_<type> pair per code type and its contract.
/// @file
/// ObjectCode: compiled or linked GPU code as an immutable value: the code bytes, the code type, a
/// name and a symbol map (name expression -> lowered name). Creating or copying one makes no
/// driver call and needs no GPU; copies share the bytes. This header is the code layer's: the
/// calls that load the code and hand out runtime objects (get_kernel, get_global, ...) name
/// Kernel, Buffer and Stream only: include cudacore/kernel.hpp and cudacore/buffer.hpp to use
/// them (cudacore/cudacore.hpp has both).
#pragma once

#include "cudacore/forward.hpp"

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace cudacore {

/// What an ObjectCode's bytes are: a cubin, PTX text, LTO-IR, a fatbin, a relocatable object
/// (.o) or a library of them (.a).
enum class CodeType { cubin, ptx, ltoir, fatbin, object, library };

/// "cubin", "ptx", "ltoir", "fatbin", "object", "library".
std::string_view to_string(CodeType type) noexcept;
/// The inverse of to_string; throws InvalidArgumentError listing the valid names.
CodeType code_type_from_string(std::string_view name);

/// Name expression (as given to Program::compile, e.g. "scale<float>") -> lowered (mangled) name.
using SymbolMap = std::map<std::string, std::string>;

class Buffer;
class Kernel;
class Stream;

/// How ObjectCode::from_handle treats a library the caller loaded.
struct ObjectCodeFromHandleOptions {
    /// Unload the library (cuLibraryUnload) when the last ObjectCode, Kernel or global view made
    /// from it goes, as for code cudacore loaded. False: never unloaded.
    bool take_ownership = false;
    std::string name{};  ///< for messages
};

/// Compiled code (cubin, PTX, LTO-IR, fatbin, library) as a value, loaded lazily (this file's
/// description).
class ObjectCode {
public:
    using FromHandleOptions = ObjectCodeFromHandleOptions;  ///< options of from_handle()
    /// Wraps a library the caller loaded (cuLibraryLoadData, cuLibraryLoadFromFile). Lifetime:
    /// without take_ownership the caller keeps it loaded while this ObjectCode, its Kernels and
    /// its global views are used, and unloads it after; with take_ownership cudacore unloads it
    /// when the last of them goes (after kernels launched from it finish, see library_box). The
    /// ObjectCode holds no bytes: code() is empty, code_type() says cubin, and it cannot be
    /// serialized (serialize() throws InvalidArgumentError). Throws InvalidArgumentError for a
    /// null handle and NoDriverError without a driver.
    static ObjectCode from_handle(CUlibrary library, const FromHandleOptions& options = {});

    /// Takes the code bytes as they are. Throws InvalidArgumentError when `code` is empty. The
    /// bytes' structure is checked when they are linked (Linker) or loaded (get_kernel, load).
    /// From a string the caller keeps, the bytes, name and symbols are copied (the bytes into the
    /// value's own allocation: one block and one copy in all); from a moved string, that string
    /// is kept as it is and the name and symbols are moved in. Making and dropping values in a
    /// loop is cheap (docs/design/object-code-state.md). Thread-safe.
    static ObjectCode from_bytes(CodeType type, const std::string& code, std::string_view name = {},
                                 const SymbolMap& symbols = {});
    /// from_bytes() keeping the moved string as the value's bytes (no copy).
    static ObjectCode from_bytes(CodeType type, std::string&& code, std::string name = {},
                                 SymbolMap symbols = {});
    /// from_bytes of one code type, copying or taking the string as from_bytes does.
    static ObjectCode from_cubin(const std::string& code, std::string_view name = {}, const SymbolMap& symbols = {}) {
        return from_bytes(CodeType::cubin, code, name, symbols);
    }
    /// from_bytes(CodeType::cubin, ...), taking the moved string.
    static ObjectCode from_cubin(std::string&& code, std::string name = {}, SymbolMap symbols = {}) {
        return from_bytes(CodeType::cubin, std::move(code), std::move(name), std::move(symbols));
    }
    /// from_bytes(CodeType::ptx, ...), copying the string.
    static ObjectCode from_ptx(const std::string& code, std::string_view name = {}, const SymbolMap& symbols = {}) {
        return from_bytes(CodeType::ptx, code, name, symbols);
    }
    /// from_bytes(CodeType::ptx, ...), taking the moved string.
    static ObjectCode from_ptx(std::string&& code, std::string name = {}, SymbolMap symbols = {}) {
        return from_bytes(CodeType::ptx, std::move(code), std::move(name), std::move(symbols));
    }
    /// from_bytes(CodeType::ltoir, ...), copying the string.
    static ObjectCode from_ltoir(const std::string& code, std::string_view name = {}, const SymbolMap& symbols = {}) {
        return from_bytes(CodeType::ltoir, code, name, symbols);
    }
    /// from_bytes(CodeType::ltoir, ...), taking the moved string.
    static ObjectCode from_ltoir(std::string&& code, std::string name = {}, SymbolMap symbols = {}) {
        return from_bytes(CodeType::ltoir, std::move(code), std::move(name), std::move(symbols));
    }
    /// from_bytes(CodeType::fatbin, ...), copying the string.
    static ObjectCode from_fatbin(const std::string& code, std::string_view name = {}, const SymbolMap& symbols = {}) {
        return from_bytes(CodeType::fatbin, code, name, symbols);
    }
    /// from_bytes(CodeType::fatbin, ...), taking the moved string.
    static ObjectCode from_fatbin(std::string&& code, std::string name = {}, SymbolMap symbols = {}) {
        return from_bytes(CodeType::fatbin, std::move(code), std::move(name), std::move(symbols));
    }
    /// from_bytes(CodeType::object, ...), copying the string.
    static ObjectCode from_object(const std::string& code, std::string_view name = {}, const SymbolMap& symbols = {}) {
        return from_bytes(CodeType::object, code, name, symbols);
    }
    /// from_bytes(CodeType::object, ...), taking the moved string.
    static ObjectCode from_object(std::string&& code, std::string name = {}, SymbolMap symbols = {}) {
        return from_bytes(CodeType::object, std::move(code), std::move(name), std::move(symbols));
    }
    /// from_bytes(CodeType::library, ...), copying the string.
    static ObjectCode from_library(const std::string& code, std::string_view name = {}, const SymbolMap& symbols = {}) {
        return from_bytes(CodeType::library, code, name, symbols);
    }
    /// from_bytes(CodeType::library, ...), taking the moved string.
    static ObjectCode from_library(std::string&& code, std::string name = {}, SymbolMap symbols = {}) {
        return from_bytes(CodeType::library, std::move(code), std::move(name), std::move(symbols));
    }
    /// Reads the whole file; the name defaults to the file name. Throws InvalidArgumentError
    /// naming the path when it cannot be read or is empty.
    static ObjectCode from_file(CodeType type, const std::filesystem::path& path,
                                std::string name = {});
    /// Reads a whole regular file (refusing directories, FIFOs and devices without blocking, and
    /// files over max_serialized_size) into an ObjectCode with `symbols` as its symbol map. The
    /// code type, when not given, comes from the extension: .cubin, .ptx, .ltoir (.lto), .fatbin,
    /// .o (object), .a (library). The name defaults to the file name. Throws
    /// InvalidArgumentError naming the path when it cannot be read, is empty, or its type cannot
    /// be told from its extension.
    static ObjectCode from_file(const std::filesystem::path& path,
                                std::optional<CodeType> type = std::nullopt,
                                SymbolMap symbols = {}, std::string name = {});

    /// What the bytes are. Never throws.
    CodeType code_type() const noexcept;
    /// The name given when it was made (a compile's program name; a file's name). Never throws.
    const std::string& name() const noexcept;
    /// The raw code bytes (PTX is text; the others are binary).
    std::string_view code() const noexcept;
    /// The number of code bytes. Never throws.
    std::size_t size() const noexcept { return code().size(); }
    /// Name expressions and their lowered names, as the compile recorded them. Never throws.
    const SymbolMap& symbol_map() const noexcept;
    /// The lowered name of a name expression, or `name` itself when it is not in the map.
    std::string lowered_name(std::string_view name) const;

    /// Equal when code type, name, bytes and symbol map are all equal.
    bool operator==(const ObjectCode& other) const noexcept;

    /// Serialized form (docs/design/object-code-state.md gives the layout): magic, format
    /// version, byte-order mark, code type, name, symbol map, code bytes and an XXH3-64 checksum,
    /// every integer little-endian. Holds no driver state: a deserialized ObjectCode loads lazily
    /// like any other. deserialize() throws SerializationError for truncated, corrupted,
    /// oversized (beyond max_serialized_size) or future-version input, and never reads outside
    /// `bytes`.
    static constexpr std::uint32_t serialization_format_version = 1;
    static constexpr std::uint64_t max_serialized_size = std::uint64_t{4} << 30;  ///< 4 GiB
    /// The serialized form above. Throws InvalidArgumentError for a from_handle() value.
    std::string serialize() const;
    /// The ObjectCode serialize() gave `bytes` for (see above for what it throws).
    static ObjectCode deserialize(std::string_view bytes);
    /// The serialized form in three parts, for senders that send the code bytes where they lie
    /// (MPI): serialize() == head + code() + tail. Costs one pass over the code (the checksum), no
    /// copy of it.
    struct SerializedParts {
        std::string head{};  ///< everything before the code bytes
        std::string tail{};  ///< the checksum
    };
    /// serialize() as head and tail around code(). Throws as serialize() does.
    SerializedParts serialize_parts() const;
    /// deserialize(head + code + tail), without copying `code`: it becomes the ObjectCode's bytes.
    /// Throws SerializationError as deserialize() does.
    static ObjectCode deserialize_parts(std::string_view head, std::string code, std::string_view tail);
    /// Whether `bytes` start with the serialized form's magic (says nothing of their validity).
    static bool looks_serialized(std::string_view bytes) noexcept;
    /// Writes serialize() to `path` atomically (a temporary file in the same directory, fsync,
    /// rename, fsync of the directory): a crash leaves the old file or the new one, never a
    /// half-written one. A symbolic link is followed, as cp does (a dangling one too: its target
    /// is created); an existing file keeps its permission bits. A directory, FIFO, device or
    /// socket at `path` is refused and left as it is, and so is an empty path. Names up to the
    /// file system's limit work. Throws SerializationError naming the path and why (errno text on
    /// I/O failure).
    void save(const std::filesystem::path& path) const;
    /// Reads a file written by save() (from_file reads a raw cubin, PTX, ... file; `code.load()`
    /// is what loads the code into the driver). Throws SerializationError (naming the path) when
    /// it cannot be read or is not a valid serialization. Thread-safe.
    static ObjectCode from_saved(const std::filesystem::path& path);
    /// The earlier name, which read like the member load().
    [[deprecated("use ObjectCode::from_saved(path)")]]
    static ObjectCode load(const std::filesystem::path& path);

    /// Loading (needs a driver). The code is loaded into the driver
    /// (cuLibraryLoadData, context-independent) on the first get_kernel() or load(), exactly once
    /// even when many threads ask at once, and into the current device's context (Device::current())
    /// so that code for another arch fails then. The outcome is kept: a failure (no driver: the
    /// NoDriverError; code for another arch, corrupt bytes: DriverError naming the kernel, code
    /// type, size and device arch; malformed container structure, checked before the driver is
    /// touched because its loader crashes on some: InvalidArgumentError naming the code and what
    /// is wrong) is thrown again, identically, on every later use. LTO-IR and
    /// relocatable objects/libraries are refused with InvalidArgumentError saying to link them;
    /// PTX is JIT-compiled by the driver. Copies share the loaded library; it is unloaded when
    /// the last ObjectCode or Kernel using it is gone (and kernels launched from it are done).
    void load() const;
    /// Whether a load() (or a get_kernel) has succeeded for this value or a copy. Never throws.
    bool is_loaded() const noexcept;
    /// The loaded library (CUlibrary) shared by the copies, or nullopt before a load() or
    /// get_kernel() succeeded (never loads). It stays valid while this ObjectCode, a copy, or a
    /// Kernel taken from it lives; never unload it yourself.
    std::optional<CUlibrary> handle() const noexcept;
    /// The kernel for a name expression of the symbol map ("scale<float>") or a plain name. The
    /// first lookup of a name asks the driver; later ones are a cached read (no driver call).
    /// Throws InvalidArgumentError listing the kernels the code holds when there is none so named.
    Kernel get_kernel(std::string_view name) const;
    /// The loaded library (loads it first, like get_kernel); owned as described above.
    CUlibrary library_handle() const;

    /// Module globals. A __device__ or __constant__ variable (cuLibraryGetGlobal), by plain name,
    /// lowered name, name expression of the symbol map ("&counter", "table<float>"; "counter"
    /// also finds "&counter"), or, for cubin code, C++ name ("tuning::scale": the global whose
    /// lowered name demangles to it), as a non-owning Buffer view of its device memory that holds
    /// the library loaded while it lives and never frees the memory. Loads the code first like
    /// get_kernel; the address is the library's in the context it was loaded into
    /// (library_context). Later lookups of a name return the same view (no driver call). Throws
    /// InvalidArgumentError listing the globals the code holds when there is none so named.
    Buffer get_global(std::string_view name) const;
    /// A __managed__ variable (cuLibraryGetManaged): the same kind of view, host-accessible.
    Buffer get_managed(std::string_view name) const;
    /// Typed access: `T` must be trivially copyable with sizeof(T) equal to the variable's size
    /// (else InvalidArgumentError naming both sizes); use std::array for arrays.
    /// write_global copies `value` in, ordered on `stream` (returns once `value` may be reused);
    /// read_global copies out on `stream` and waits for it.
    template <class T>
    void write_global(std::string_view name, const T& value, const Stream& stream) const {
        static_assert(std::is_trivially_copyable_v<T>, "write_global needs a trivially copyable T");
        write_global_bytes(name, static_cast<const void*>(&value), sizeof(T), stream);
    }
    /// See write_global: copies the variable out on `stream`, waits, and returns it.
    template <class T>
    T read_global(std::string_view name, const Stream& stream) const {
        static_assert(std::is_trivially_copyable_v<T>, "read_global needs a trivially copyable T");
        T value;
        read_global_bytes(name, static_cast<void*>(&value), sizeof(T), stream);
        return value;
    }

    /// Ends the value (bytes, loaded library, cached kernels) for every copy: their calls then throw
    /// InvalidArgumentError naming the call and the code; Kernels and global views taken before
    /// keep the library until they go; a cache's value is another owner. DriverError when the
    /// unload fails (closed all the same). Not to race with other calls on a copy.
    void close();
    /// Whether close() was called on this object or a copy. Never throws.
    bool is_closed() const noexcept;
    /// Drops this object's share, leaving it empty (as moved from). Never throws.
    void reset() noexcept { holder_.reset(); }
private:
    friend struct detail::ObjectCodeAccess;
    /// get_global(name), checked to be `size` bytes (InvalidArgumentError naming `operation`).
    Buffer sized_global(std::string_view name, std::size_t size, const char* operation) const;
    /// write_global and read_global for `size` bytes at `value`.
    void write_global_bytes(std::string_view name, const void* value, std::size_t size,
                            const Stream& stream) const;
    void read_global_bytes(std::string_view name, void* value, std::size_t size,
                           const Stream& stream) const;
    /// get_kernel's first lookup of a name: loads the code, asks the driver, caches the Kernel.
    Kernel first_kernel_lookup(std::string_view name) const;
    explicit ObjectCode(std::shared_ptr<detail::ObjectCodeState> state);
    // The value (src/code/object_code_state.hpp: a stand-in when closed or empty).
    const std::shared_ptr<detail::ObjectCodeState>& state() const noexcept;
    std::shared_ptr<detail::ObjectCodeHolder> holder_;  // shared by the copies; null when empty
};

/// "cubin 'saxpy' (5120 bytes, 2 symbols)". Makes no driver call; never throws beyond
/// std::bad_alloc.
std::string to_string(const ObjectCode& code);
/// Writes to_string(code).
std::ostream& operator<<(std::ostream& out, const ObjectCode& code);

}  // namespace cudacore

// std::hash<ObjectCode> agrees with operator==: the value (code type, name, bytes, symbol map),
// computed once per shared state (XXH3-64) and cached; cudacore/identity.hpp lists it with the
// other objects' hashes.
#ifndef CUDACORE_DOXYGEN
template <>
struct std::hash<cudacore::ObjectCode> {
    std::size_t operator()(const cudacore::ObjectCode& code) const noexcept {
        return cudacore::detail::object_code_hash(code);
    }
};
#endif  // CUDACORE_DOXYGEN
