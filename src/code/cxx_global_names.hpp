// Globals by their C++ names ("x::a", "S::m"): the lowered name of a cubin's global whose name
// demangles to the one asked for, so that ObjectCode::get_global finds a variable without a name
// expression registered for it (as jitify does). Internal.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudacore::detail {

// The one name of `lowered_names` (a cubin's globals: cubin_global_names) that demangles to
// `cxx_name`, or nullopt when none does (or `cxx_name` is itself one of them). Names over twice
// the length of `cxx_name` (and 16) or with more than 16 back references are not demangled: their
// text could be exponentially long. Throws std::bad_alloc only.
std::optional<std::string> lowered_global_of_cxx_name(std::string_view cxx_name,
                                                      const std::vector<std::string>& lowered_names);

}  // namespace cudacore::detail
