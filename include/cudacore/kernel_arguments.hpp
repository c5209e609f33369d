/// @file
/// Kernel arguments packed as the driver takes them (one run of bytes per kernel parameter):
/// KernelArguments, the value a kernel graph node holds and reads back, and the packing that the
/// templates taking launch()-style arguments share. Arguments are converted as launch() converts
/// them (launch.hpp: a Buffer becomes its device address).
/// Thread-safety: plain values; copies are independent (a KernelArguments copies its bytes).
#pragma once

#include "cudacore/launch.hpp"

#include <cstddef>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <vector>

namespace cudacore {

/// The bytes of a kernel node's arguments, one run of bytes per kernel parameter, as the driver
/// copies them. Made from launch()-style arguments (KernelArguments::of, converted as launch()
/// converts them: a Buffer becomes its device address) or read back from a node.
class KernelArguments {
public:
    /// No arguments (a kernel without parameters).
    KernelArguments() = default;

    /// The arguments `args`, converted and sized as launch() does (a closed Buffer:
    /// InvalidArgumentError). Nothing is held: a Buffer passes as its address only.
    template <class... Args>
    static KernelArguments of(const Args&... args) {
        KernelArguments out;
        (out.append_converted(KernelArgument<Args>::convert(args)), ...);
        return out;
    }

    /// Appends one argument: `size` bytes copied from `data` (null only with size 0).
    void append(const void* data, std::size_t size);
    /// How many arguments.
    std::size_t count() const noexcept { return sizes_.size(); }
    /// The size in bytes of argument `index` (InvalidArgumentError when out of range).
    std::size_t size(std::size_t index) const;
    /// The bytes of argument `index` (InvalidArgumentError when out of range); valid until the
    /// next append or the end of this object.
    const void* data(std::size_t index) const;
    /// Argument `index` read as a T. InvalidArgumentError when out of range or when its size is
    /// not sizeof(T) (the message gives both sizes).
    template <class T>
    T as(std::size_t index) const {
        static_assert(std::is_trivially_copyable_v<T>, "kernel arguments are plain bytes");
        check_size(index, sizeof(T));
        T value;
        std::memcpy(&value, data(index), sizeof(T));
        return value;
    }
    /// The sizes, one per argument (what the kernel's parameters are checked against).
    const std::vector<std::size_t>& sizes() const noexcept { return sizes_; }
    /// One pointer per argument into this object's bytes, as the driver's kernelParams array
    /// takes them; valid until the next append or the end of this object.
    std::vector<void*> pointers() const;

    /// Equal when every argument has the same bytes.
    bool operator==(const KernelArguments& other) const noexcept;

private:
    template <class T>
    void append_converted(const T& value) {
        append(&value, sizeof(T));
    }
    void check_size(std::size_t index, std::size_t expected) const;

    std::vector<unsigned char> bytes_;  // each argument starts at a 16-byte aligned offset
    std::vector<std::size_t> offsets_;
    std::vector<std::size_t> sizes_;
};

}  // namespace cudacore
