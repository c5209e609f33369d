/// @file
/// ObjectCode: compiled or linked GPU code as an immutable value, loaded lazily. Making or copying
/// one makes no driver call; copies share the bytes.
#pragma once

#include "cudacore/owning_handle.hpp"

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

/// What an ObjectCode's bytes are (object: a relocatable .o; library: an .a of them).
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
    /// Unload the library when the last ObjectCode, Kernel or global view of it goes.
    bool take_ownership = false;
    std::string name{};  ///< for messages
};

/// Compiled code as a value, loaded lazily. After close(), what uses the bytes or the library
/// (serialize(), save(), get_kernel(), load(), lowered_name()...) throws InvalidArgumentError
/// naming the call; the accessors still answer (code_type() and name() as before, code() empty,
/// symbol_map() empty, handle() nullopt, is_loaded() false), and comparing or hashing compares the
/// closed stand-in. All are thread-safe except close().
class ObjectCode {
public:
    using FromHandleOptions = ObjectCodeFromHandleOptions;  ///< options of from_handle()
    /// Wraps a library the caller loaded (no bytes), which the caller keeps loaded while it is
    /// used unless owned. InvalidArgumentError (null), NoDriverError.
    static ObjectCode from_handle(CUlibrary library, const FromHandleOptions& options = {});

    /// Copies the code bytes as they are. InvalidArgumentError when `code` is empty.
    static ObjectCode from_bytes(CodeType type, const std::string& code, std::string_view name = {},
                                 const SymbolMap& symbols = {});
    /// from_bytes() keeping the moved string as the value's bytes (no copy).
    static ObjectCode from_bytes(CodeType type, std::string&& code, std::string name = {},
                                 SymbolMap symbols = {});
    /// from_bytes(CodeType::cubin, ...), copying the string.
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
    /// Reads the whole file (name: the file name). InvalidArgumentError: unreadable or empty.
    static ObjectCode from_file(CodeType type, const std::filesystem::path& path,
                                std::string name = {});
    /// Reads a regular file of at most max_serialized_size; the type defaults from the extension
    /// (.cubin .ptx .ltoir/.lto .fatbin .o .a). InvalidArgumentError: unreadable, empty, unknown.
    static ObjectCode from_file(const std::filesystem::path& path,
                                std::optional<CodeType> type = std::nullopt,
                                SymbolMap symbols = {}, std::string name = {});

    /// What the bytes are.
    CodeType code_type() const noexcept;
    /// The name given when it was made (a compile's program name; a file's name).
    const std::string& name() const noexcept;
    /// The raw code bytes (PTX is text; the others are binary).
    std::string_view code() const noexcept;
    /// The number of code bytes.
    std::size_t size() const noexcept { return code().size(); }
    /// Name expressions and their lowered names, as the compile recorded them.
    const SymbolMap& symbol_map() const noexcept;
    /// The lowered name of a name expression, or `name` itself when it is not in the map.
    std::string lowered_name(std::string_view name) const;

    /// Equal when code type, name, bytes and symbol map are all equal.
    bool operator==(const ObjectCode& other) const noexcept;

    /// The serialized form's version (layout: docs/design/object-code-state.md).
    static constexpr std::uint32_t serialization_format_version = 1;
    static constexpr std::uint64_t max_serialized_size = std::uint64_t{4} << 30;  ///< 4 GiB
    /// The serialized form (fields and checksum). InvalidArgumentError for a from_handle() value.
    std::string serialize() const;
    /// The ObjectCode serialize() gave `bytes` for; SerializationError for any other input.
    static ObjectCode deserialize(std::string_view bytes);
    /// serialize() == head + code() + tail, for senders of the code bytes where they lie (MPI).
    struct SerializedParts {
        std::string head{};  ///< everything before the code bytes
        std::string tail{};  ///< the checksum
    };
    /// serialize() as head and tail around code(). Throws as serialize() does.
    SerializedParts serialize_parts() const;
    /// deserialize(head + code + tail), `code` becoming the bytes. Throws as deserialize().
    static ObjectCode deserialize_parts(std::string_view head, std::string code, std::string_view tail);
    /// Whether `bytes` start with the serialized form's magic (says nothing of their validity).
    static bool looks_serialized(std::string_view bytes) noexcept;
    /// Writes serialize() to `path` atomically (docs/design/object-code-state.md, "Saving to a
    /// file"). SerializationError naming the path and why.
    void save(const std::filesystem::path& path) const;
    /// Reads a file written by save(). Throws SerializationError naming the path.
    static ObjectCode from_saved(const std::filesystem::path& path);
    /// The earlier name, which read like the member load().
    [[deprecated("use ObjectCode::from_saved(path)")]]
    static ObjectCode load(const std::filesystem::path& path);

    /// Loads the code once for all copies, in the current device's context; a failure is thrown
    /// again on every use: NoDriverError, DriverError (wrong arch, corrupt bytes),
    /// InvalidArgumentError (malformed, or code that needs a link).
    void load() const;
    /// Whether a load() (or a get_kernel) has succeeded for this value or a copy.
    bool is_loaded() const noexcept;
    /// The loaded library, or nullopt before a load succeeded (never loads); never unload it.
    std::optional<CUlibrary> handle() const noexcept;
    /// The kernel for a name expression or plain name; InvalidArgumentError lists the kernels.
    Kernel get_kernel(std::string_view name) const;
    /// The loaded library (loads it first, like get_kernel); never unload it.
    CUlibrary library_handle() const;

    /// A __device__/__constant__ variable by any of its names, as a Buffer view holding the
    /// library; loads first. InvalidArgumentError lists the globals when none is so named.
    Buffer get_global(std::string_view name) const;
    /// A __managed__ variable (cuLibraryGetManaged): the same kind of view, host-accessible.
    Buffer get_managed(std::string_view name) const;
    /// Copies `value` into the variable on `stream`; InvalidArgumentError for a size mismatch.
    template <class T>
    void write_global(std::string_view name, const T& value, const Stream& stream) const {
        static_assert(std::is_trivially_copyable_v<T>, "write_global needs a trivially copyable T");
        write_global_bytes(name, static_cast<const void*>(&value), sizeof(T), stream);
    }
    /// Copies the variable out on `stream`, waits, and returns it; sizes as write_global.
    template <class T>
    T read_global(std::string_view name, const Stream& stream) const {
        static_assert(std::is_trivially_copyable_v<T>, "read_global needs a trivially copyable T");
        T value;
        read_global_bytes(name, static_cast<void*>(&value), sizeof(T), stream);
        return value;
    }

    /// Ends the value for every copy; DriverError when the unload fails (closed all the same).
    void close();
    /// Whether close() was called on this object or a copy.
    bool is_closed() const noexcept;
    /// Drops this object's share, leaving it empty (as moved from).
    void reset() noexcept { holder_.reset(); }
private:
    friend struct detail::ObjectCodeAccess;
    Buffer sized_global(std::string_view name, std::size_t size, const char* operation) const;
    void write_global_bytes(std::string_view name, const void* value, std::size_t size,
                            const Stream& stream) const;
    void read_global_bytes(std::string_view name, void* value, std::size_t size,
                           const Stream& stream) const;
    Kernel first_kernel_lookup(std::string_view name) const;
    explicit ObjectCode(std::shared_ptr<detail::ObjectCodeState> state);
    const std::shared_ptr<detail::ObjectCodeState>& state() const noexcept;
    std::shared_ptr<detail::ObjectCodeHolder> holder_;  // shared by the copies; null when empty
};

/// "cubin 'saxpy' (5120 bytes, 2 symbols)"; makes no driver call.
std::string to_string(const ObjectCode& code);
/// Writes to_string(code).
std::ostream& operator<<(std::ostream& out, const ObjectCode& code);

}  // namespace cudacore

// std::hash<ObjectCode> agrees with operator== (the value), computed once per shared state.
#ifndef CUDACORE_DOXYGEN
template <>
struct std::hash<cudacore::ObjectCode> {
    std::size_t operator()(const cudacore::ObjectCode& code) const noexcept;
};
#endif  // CUDACORE_DOXYGEN
