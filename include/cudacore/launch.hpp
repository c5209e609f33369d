/// @file
/// launch(): enqueue a kernel on a stream, its arguments checked against the kernel's parameters
/// first. Arguments: trivially copyable values, pointers, Buffers, textures and surfaces; other
/// types specialise KernelArgument<T>. TypedKernel checks types at compile time.
///
///     launch(stream, LaunchConfig{.grid = blocks, .block = 256}, kernel, a, x, y, n);
#pragma once

#include "cudacore/kernel.hpp"
#include "cudacore/launch_config.hpp"
#include "cudacore/stream.hpp"

#include <cuda.h>

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

namespace cudacore {

class Buffer;
namespace detail {
/// InvalidArgumentError: a closed (or empty) Buffer given to launch().
[[noreturn]] void throw_closed_buffer_argument();
}  // namespace detail

/// How a launch() argument of type T reaches the kernel; trivially copyable values as they are.
template <class T>
struct KernelArgument {
    static_assert(!std::is_array_v<T>,
                  "pass a pointer (array.data() or &array[0]) instead of an array");
    static_assert(std::is_trivially_copyable_v<T>,
                  "kernel arguments must be trivially copyable values, pointers or Buffers "
                  "(or specialise cudacore::KernelArgument<T>)");
    /// The value itself (by reference: no copy before the driver's).
    static const T& convert(const T& value) noexcept { return value; }
};

/// A Buffer is passed as its device pointer (include cudacore/buffer.hpp to pass one).
template <class T>
    requires std::is_same_v<T, Buffer>
struct KernelArgument<T> {
    /// The buffer's device address; InvalidArgumentError when it is closed or empty.
    static CUdeviceptr convert(const T& buffer) {
        if (buffer.is_closed()) detail::throw_closed_buffer_argument();
        return buffer.handle();
    }
};

/// An object a kernel reads through its handle, whose release waits for its kernels.
template <class T>
concept launch_noted_object = requires(const T& object, const Stream& stream) {
    object.note_launch(stream);
    object.check_usable("launch");
    object.handle();
};

/// launch() passes such an object as its handle and notes the launch's stream.
template <class T>
    requires launch_noted_object<T>
struct KernelArgument<T> {
    /// The 64-bit handle; InvalidArgumentError when it is closed or moved from.
    static auto convert(const T& object) {
        object.check_usable("launch");
        return object.handle();
    }
    /// Called by launch() once the kernel is enqueued on `stream`.
    static void note_launch(const T& object, const Stream& stream) { object.note_launch(stream); }
};

namespace detail {

/// The launch proper. `sizes` null: sizes were checked already (TypedKernel).
void launch_kernel(const Stream& stream, const LaunchConfig& config, const Kernel& kernel,
                   void** arguments, const std::size_t* sizes, std::size_t count);
/// Throws InvalidArgumentError when `count` / `sizes` do not match the kernel's parameters.
void check_kernel_arguments(const Kernel& kernel, const std::size_t* sizes, std::size_t count);

template <class T>
using converted_argument_t =
    std::remove_cvref_t<decltype(KernelArgument<T>::convert(std::declval<const T&>()))>;

template <class T>
concept noted_kernel_argument = requires(const T& value, const Stream& stream) {
    KernelArgument<T>::note_launch(value, stream);
};
template <class T>
void note_launch(const Stream& stream, const T& value) {
    if constexpr (noted_kernel_argument<T>) KernelArgument<T>::note_launch(value, stream);
}

/// Packs launch()-style arguments and calls use(pointers, sizes, count) while they live.
template <class Use, class... Args>
decltype(auto) with_kernel_arguments(Use&& use, const Args&... args) {
    constexpr std::size_t count = sizeof...(Args);
    // Braces: with parentheses clang parses this line as a declaration.
    std::tuple<decltype(KernelArgument<Args>::convert(args))...> converted{
        KernelArgument<Args>::convert(args)...};
    static constexpr std::size_t sizes[count ? count : 1] = {
        sizeof(converted_argument_t<Args>)...};
    void* pointers[count ? count : 1] = {};
    std::apply(
        [&pointers](const auto&... values) {
            std::size_t index = 0;
            ((pointers[index++] = const_cast<void*>(static_cast<const void*>(&values))), ...);
        },
        converted);
    return use(static_cast<void**>(pointers), static_cast<const std::size_t*>(sizes), count);
}

}  // namespace detail

/// Enqueues `kernel` on `stream`; InvalidArgumentError (arguments or config), DriverError. Keeps
/// the library and texture/surface arguments alive until the kernel is done. Thread-safe.
template <class... Args>
void launch(const Stream& stream, const LaunchConfig& config, const Kernel& kernel,
            const Args&... args) {
    detail::with_kernel_arguments(
        [&](void** pointers, const std::size_t* sizes, std::size_t count) {
            detail::launch_kernel(stream, config, kernel, pointers, sizes, count);
        },
        args...);
    (detail::note_launch(stream, args), ...);
}

template <class Signature>
class TypedKernel;

/// A Kernel whose parameter types are known at compile time.
template <class... Params>
class TypedKernel<void(Params...)> {
    static_assert((std::is_trivially_copyable_v<Params> && ...),
                  "kernel parameter types must be trivially copyable");

public:
    /// Throws InvalidArgumentError when the kernel's parameter count or sizes differ.
    explicit TypedKernel(Kernel kernel) : kernel_(std::move(kernel)) {
        static constexpr std::size_t sizes[sizeof...(Params) ? sizeof...(Params) : 1] = {
            sizeof(Params)...};
        detail::check_kernel_arguments(kernel_, sizes, sizeof...(Params));
    }
    /// The kernel it wraps (held by this object).
    const Kernel& kernel() const noexcept { return kernel_; }

private:
    Kernel kernel_;
};

/// Arguments convert as in a function call; a wrong count or type does not compile.
template <class... Params>
void launch(const Stream& stream, const LaunchConfig& config,
            const TypedKernel<void(Params...)>& kernel, std::type_identity_t<Params>... args) {
    void* pointers[sizeof...(Params) ? sizeof...(Params) : 1] = {static_cast<void*>(&args)...};
    detail::launch_kernel(stream, config, kernel.kernel(), pointers, nullptr, sizeof...(Params));
}

}  // namespace cudacore
