/// @file
/// Identity of cudacore's handle objects: std::hash, equality and printing, so that Device,
/// Context, Stream, Event, Kernel, Buffer and ObjectCode key unordered containers and print
/// readably (operator<< and to_string).
///
/// Equality and hash agree with each type's operator==:
/// - Device: the ordinal.
/// - Context, Stream, Event, Kernel: the driver handle (two objects wrapping one CUstream, one
///   owning it and one from Stream::from_handle, are equal).
/// - Buffer: the allocation (copies share it); a closed Buffer keeps its identity.
/// - ObjectCode: its value (code type, name, bytes, symbol map), as its operator== says: two
///   ObjectCodes with the same bytes are one key, whether they share their state or not (copies
///   share it). Its hash is computed once per shared state (XXH3-64 over the bytes) and cached.
/// Hashing and printing make no driver call, never throw (beyond std::bad_alloc for the strings)
/// and may be called from any thread.
///
/// Buffer's and ObjectCode's are declared with them, in cudacore/buffer.hpp and
/// cudacore/object_code.hpp (this header includes the latter; the memory layer's buffer.hpp is
/// above this one): whoever has one of them has its hash and printing too.
#pragma once

#include "cudacore/context.hpp"
#include "cudacore/device.hpp"
#include "cudacore/event.hpp"
#include "cudacore/kernel.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/stream.hpp"

#include <cstddef>
#include <functional>
#include <iosfwd>
#include <string>

namespace cudacore {

/// "device 0".
std::string to_string(const Device& device);
/// "context 0x5603c1a2b4d0 of device 0".
std::string to_string(const Context& context);
/// "stream 0x5603c1a2b4d0 on device 0" (the legacy default stream prints as 0x0).
std::string to_string(const Stream& stream);
/// "event 0x5603c1a2b4d0 on device 0".
std::string to_string(const Event& event);
/// Kernel::description(): "kernel 'saxpy' (cubin 'saxpy', 5120 bytes)".
std::string to_string(const Kernel& kernel);

/// Writes a readable description of the object, as to_string() does.
std::ostream& operator<<(std::ostream& out, const Device& device);
/// Writes a readable description of the object, as to_string() does.
std::ostream& operator<<(std::ostream& out, const Context& context);
/// Writes a readable description of the object, as to_string() does.
std::ostream& operator<<(std::ostream& out, const Stream& stream);
/// Writes a readable description of the object, as to_string() does.
std::ostream& operator<<(std::ostream& out, const Event& event);
/// Writes a readable description of the object, as to_string() does.
std::ostream& operator<<(std::ostream& out, const Kernel& kernel);

}  // namespace cudacore

// std::hash of each: the reference lists them in this file's description.
#ifndef CUDACORE_DOXYGEN
template <>
struct std::hash<cudacore::Device> {
    std::size_t operator()(const cudacore::Device& device) const noexcept {
        return std::hash<int>{}(device.ordinal());
    }
};
template <>
struct std::hash<cudacore::Context> {
    std::size_t operator()(const cudacore::Context& context) const noexcept {
        return std::hash<const void*>{}(context.handle());
    }
};
template <>
struct std::hash<cudacore::Stream> {
    std::size_t operator()(const cudacore::Stream& stream) const noexcept {
        return std::hash<const void*>{}(stream.handle());
    }
};
template <>
struct std::hash<cudacore::Event> {
    std::size_t operator()(const cudacore::Event& event) const noexcept;  // identity.cpp
};
template <>
struct std::hash<cudacore::Kernel> {
    std::size_t operator()(const cudacore::Kernel& kernel) const noexcept {
        return std::hash<const void*>{}(kernel.handle());
    }
};
#endif  // CUDACORE_DOXYGEN
