// Bounds-checked reading of untrusted binary code: every read and every range is checked
// against the bytes actually there, without overflow, before a byte is touched. A size or an
// offset read from the bytes is never trusted. What is wrong is thrown as MalformedBytes, a
// message without outer context; its callers add what the bytes are and where they sit.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

namespace cudacore::detail {

// What is wrong with the bytes, without the outer context (validate_code adds the code type,
// name and size; nested images add where they sit).
struct MalformedBytes {
    std::string detail;
};

[[noreturn]] inline void fail_malformed(std::string detail) { throw MalformedBytes{std::move(detail)}; }

inline std::string num(std::uint64_t value) { return std::to_string(value); }

// [offset, offset + size) lies within `total` bytes, computed without overflow.
inline bool in_bounds(std::uint64_t offset, std::uint64_t size, std::uint64_t total) noexcept {
    return offset <= total && size <= total - offset;
}

// `count` entries of `entry_size` bytes at `offset` lie within `total` bytes.
inline bool table_in_bounds(std::uint64_t offset, std::uint64_t count, std::uint64_t entry_size,
                            std::uint64_t total) noexcept {
    return offset <= total && (entry_size == 0 || count <= (total - offset) / entry_size);
}

// The T at `offset`, or false when it does not lie within the bytes.
template <typename T>
bool try_read_at(std::string_view bytes, std::uint64_t offset, T& out) noexcept {
    if (!in_bounds(offset, sizeof(T), bytes.size())) return false;
    std::memcpy(&out, bytes.data() + offset, sizeof(T));
    return true;
}

// The T at `offset`; throws MalformedBytes "<what> at offset N runs past the end".
template <typename T>
T read_at(std::string_view bytes, std::uint64_t offset, const char* what) {
    T out;
    if (!try_read_at(bytes, offset, out))
        fail_malformed(std::string(what) + " at offset " + num(offset) + " runs past the end");
    return out;
}

}  // namespace cudacore::detail
