// The out-of-line calls of OwningHandle's inline code (declared in cudacore/owning_handle.hpp):
// the refusals of a closed or empty handle, and the release that close() reports.
#include "cudacore/owning_handle.hpp"

#include "cudacore/errors.hpp"
#include "errors/closed_object.hpp"

#include <memory>
#include <string>

namespace cudacore::detail {

void throw_closed_object_error(const char* operation, const char* object, const char* type) {
    throw InvalidArgumentError(std::string(operation) + ": " + object + " is closed (" + type +
                               "::close was called on it or on a copy)");
}

void throw_moved_from_error(const char* operation, const char* type, const char* what) {
    throw InvalidArgumentError(std::string(operation) + ": the " + type +
                               " object is empty (moved from or reset: it holds no " + what + ")");
}

void release_reporting(std::shared_ptr<void>& share) { release_share(share); }

}  // namespace cudacore::detail
