/// @file
/// KernelArguments: kernel arguments packed as the driver takes them, the value a kernel graph
/// node holds and reads back.
#pragma once

#include "cudacore/launch.hpp"

#include <cstddef>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <vector>

namespace cudacore {

/// A kernel node's argument bytes, one run per parameter; a plain value. data() and pointers()
/// stay valid until the next append; a bad index throws InvalidArgumentError.
class KernelArguments {
public:
    /// No arguments (a kernel without parameters).
    KernelArguments() = default;

    /// The arguments converted and sized as launch() does; holds nothing (a Buffer: its address).
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
    /// The size in bytes of argument `index`.
    std::size_t size(std::size_t index) const;
    /// The bytes of argument `index`.
    const void* data(std::size_t index) const;
    /// Argument `index` read as a T; InvalidArgumentError unless its size is sizeof(T).
    template <class T>
    T as(std::size_t index) const {
        static_assert(std::is_trivially_copyable_v<T>, "kernel arguments are plain bytes");
        check_size(index, sizeof(T));
        T value;
        std::memcpy(&value, data(index), sizeof(T));
        return value;
    }
    /// The sizes, one per argument.
    const std::vector<std::size_t>& sizes() const noexcept { return sizes_; }
    /// One pointer per argument, as the driver's kernelParams array takes them.
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
