// Memory resources as cudacore makes them: one allocation, as std::make_shared's, on a cache line
// of their own (MemoryResource is alignas(64), docs/design/buffers.md). std::make_shared takes
// such a type's memory through the over-aligned operator new, which glibc serves with memalign:
// about 800 instructions per resource, a third of an IPC pool import's own cost. This allocator
// asks the plain operator new for a line more and aligns inside it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <utility>

namespace cudacore::detail {

template <class T>
struct LineAlignedAllocator {
    using value_type = T;
    static constexpr std::size_t line = 64;
    static_assert(alignof(T) <= line);

    LineAlignedAllocator() = default;
    template <class U>
    LineAlignedAllocator(const LineAlignedAllocator<U>&) noexcept {}

    // The block starts 1 to 64 bytes into what operator new gave; the byte before it says how far.
    T* allocate(std::size_t n) {
        auto* raw = static_cast<unsigned char*>(::operator new(n * sizeof(T) + line));
        const std::size_t shift = line - reinterpret_cast<std::uintptr_t>(raw) % line;
        raw[shift - 1] = static_cast<unsigned char>(shift);
        return reinterpret_cast<T*>(raw + shift);
    }
    void deallocate(T* block, std::size_t) noexcept {
        auto* aligned = reinterpret_cast<unsigned char*>(block);
        ::operator delete(aligned - aligned[-1]);
    }
    template <class U>
    bool operator==(const LineAlignedAllocator<U>&) const noexcept {
        return true;
    }
};

// std::make_shared<Resource>(arguments...), with the allocation above.
template <class Resource, class... Arguments>
std::shared_ptr<Resource> make_resource(Arguments&&... arguments) {
    return std::allocate_shared<Resource>(LineAlignedAllocator<Resource>{},
                                          std::forward<Arguments>(arguments)...);
}

}  // namespace cudacore::detail
