// How a compile log's hint line begins: CompileError's message quotes such lines after the
// log's first error line. Internal.
#pragma once

#include <string_view>

namespace cudacore::detail {

inline constexpr std::string_view kCompileHintPrefix = "cudacore hint: ";

}  // namespace cudacore::detail
