// system::nvrtc_version / nvjitlink_version: the versions the loader read when it opened them.
#include "cudacore/system.hpp"

#include "loader/compiler_apis.hpp"

namespace cudacore::system {

LibraryVersion nvrtc_version() {
    const detail::NvrtcApi& api = detail::nvrtc();
    return {api.major, api.minor};
}

LibraryVersion nvjitlink_version() {
    const detail::NvJitLinkApi& api = detail::nvjitlink();
    return {static_cast<int>(api.major), static_cast<int>(api.minor)};
}

}  // namespace cudacore::system
