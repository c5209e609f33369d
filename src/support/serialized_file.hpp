// Saving a serialized value (ObjectCode, HeaderBundle) to a file, one way for both: written
// atomically as `cp` would write it (write_regular_file), a failure reported as a
// SerializationError that begins with `what` (the call and the object). Reading one back (those
// and cache artefacts): the file's first bytes checked before the rest is read.
#pragma once

#include "cudacore/errors.hpp"
#include "support/atomic_file.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

namespace cudacore::detail {

inline void save_serialized(const std::filesystem::path& path, std::string_view bytes,
                            const std::string& what) {
    try {
        write_regular_file(path, bytes, 0666);
    } catch (const std::system_error& e) {
        throw SerializationError(what + ": " + e.what());
    } catch (const std::invalid_argument& e) {
        throw SerializationError(what + ": cannot write '" + path.string() + "': " + e.what());
    }
}

// The regular file `path` (opened without blocking: a FIFO is refused, not waited on), read whole
// only once `check` has passed its first `head_size` bytes (fewer in a shorter file) and its size:
// `check` throws SerializationError for bytes that are not what it reads, and returns the size they
// state, which must be the file's. So a large file of anything else costs no memory. Throws
// SerializationError naming the path and why.
std::string read_serialized(const std::filesystem::path& path, std::size_t head_size,
                            const std::function<std::uint64_t(std::string_view head, std::uint64_t size)>& check);

}  // namespace cudacore::detail
