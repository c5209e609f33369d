#pragma once

namespace cudacore {
/// The library's version, "MAJOR.MINOR.PATCH".
const char* version() noexcept;
}  // namespace cudacore
