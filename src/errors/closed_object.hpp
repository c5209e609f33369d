// The closed state every owning handle object shares (close(), is_closed()): the error a call on
// a closed or moved-from object throws, and the release close() does, whose errors it reports
// where a destructor ignores them (docs/errors-and-lifetime.md, "Closing and resetting").
#pragma once

#include "errors/release_report.hpp"

#include <memory>
#include <string>

namespace cudacore::detail {

// InvalidArgumentError "OPERATION: OBJECT is closed (TYPE::close was called on this object)".
[[noreturn]] void throw_closed_object(const char* operation, const std::string& object,
                                      const char* type);
// InvalidArgumentError "OPERATION: the TYPE object was moved from (it holds no WHAT)".
[[noreturn]] void throw_moved_from(const char* operation, const char* type, const char* what);

// Drops `share` (one holder's share of a box) on this thread; when that was the last share, the
// release's driver errors, which a destructor only warns about, are thrown as DriverError.
template <class Box>
void release_share(std::shared_ptr<Box>& share) {
    ReleaseErrorCapture capture;
    share.reset();
    capture.rethrow();
}

}  // namespace cudacore::detail
