/// @file
/// Identity of cudacore's handle objects: std::hash, equality and printing, so they key unordered
/// containers. Device by ordinal; Context, Stream, Event, Kernel by driver handle; Buffer by
/// allocation; ObjectCode by value. No driver call; thread-safe.
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

std::string to_string(const Device& device);  ///< "device 0"
std::string to_string(const Context& context);  ///< "context 0x5603c1a2b4d0 of device 0"
/// "stream 0x5603c1a2b4d0 on device 0" (the legacy default stream prints as 0x0).
std::string to_string(const Stream& stream);
std::string to_string(const Event& event);  ///< "event 0x5603c1a2b4d0 on device 0"
/// Kernel::description(): "kernel 'saxpy' (cubin 'saxpy', 5120 bytes)".
std::string to_string(const Kernel& kernel);

std::ostream& operator<<(std::ostream& out, const Device& device);  ///< writes to_string(device)
std::ostream& operator<<(std::ostream& out, const Context& context);  ///< writes to_string(context)
std::ostream& operator<<(std::ostream& out, const Stream& stream);  ///< writes to_string(stream)
std::ostream& operator<<(std::ostream& out, const Event& event);  ///< writes to_string(event)
std::ostream& operator<<(std::ostream& out, const Kernel& kernel);  ///< writes to_string(kernel)

}  // namespace cudacore

// std::hash of each, as operator== compares.
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
