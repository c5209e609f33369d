// An ObjectCode's bytes: the std::string it was made from, a buffer that a receiver filled in
// place (cudacore::mpi::broadcast), or a copy that lives in its owner's own allocation
// (support/shared_with_bytes.hpp). std::string cannot hand out room it has not written first:
// making a large one to receive into costs a pass over every byte (zeros) before the real bytes
// arrive, a pass a plain MPI receive into new memory does not make.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace cudacore::detail {

class CodeBytes {
public:
    CodeBytes() = default;
    explicit CodeBytes(std::string bytes) noexcept : string_(std::move(bytes)) {}

    // `size` bytes of room, not written (std::bad_alloc when there is none). As in a std::string,
    // the byte after them is '\0': the driver reads PTX as a C string.
    static CodeBytes room_for(std::size_t size) {
        CodeBytes bytes;
        bytes.buffer_ = std::make_unique_for_overwrite<char[]>(size + 1);
        bytes.buffer_[size] = '\0';
        bytes.buffer_size_ = size;
        return bytes;
    }
    // On an empty CodeBytes: refers to bytes kept by whoever holds it (they outlive it), not
    // owned, not copied.
    void refer_to_owners(const char* data, std::size_t size) noexcept {
        beside_ = data;
        buffer_size_ = size;
    }
    // Where a receiver writes (room_for's bytes; a string's own otherwise).
    char* data() noexcept { return const_cast<char*>(std::as_const(*this).data()); }

    const char* data() const noexcept {
        return beside_ ? beside_ : buffer_ ? buffer_.get() : string_.data();
    }
    std::size_t size() const noexcept {
        return beside_ || buffer_ ? buffer_size_ : string_.size();
    }
    bool empty() const noexcept { return size() == 0; }
    operator std::string_view() const noexcept { return {data(), size()}; }
    friend bool operator==(const CodeBytes& a, const CodeBytes& b) noexcept {
        return std::string_view(a) == std::string_view(b);
    }

private:
    std::string string_;
    std::unique_ptr<char[]> buffer_;  // when set, the bytes (and string_ is empty)
    const char* beside_ = nullptr;    // when set, the bytes (refer_to_owners)
    std::size_t buffer_size_ = 0;     // the size of buffer_'s or beside_'s bytes
};

}  // namespace cudacore::detail
