// Saving a serialized value (ObjectCode, HeaderBundle) to a file, one way for both: written
// atomically as `cp` would write it (write_regular_file), a failure reported as a
// SerializationError that begins with `what` (the call and the object).
#pragma once

#include "cudacore/errors.hpp"
#include "support/atomic_file.hpp"

#include <filesystem>
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

}  // namespace cudacore::detail
