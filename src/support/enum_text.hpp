// The text of a public enumeration's value, as every to_string of one gives it: the enumerator's
// name as spelled in C++, or "Type(N)" for a value outside the enumeration
// (docs/api-conventions.md, "Enumerations").
#pragma once

#include <cstddef>
#include <string>
#include <type_traits>

namespace cudacore::detail {

// One enumerator and its name.
template <class Enum>
struct EnumText {
    Enum value;
    const char* name;
};

// The name of `value` in `names`, else `type` and the number: "ContextScheduling(7)".
template <class Enum, std::size_t N>
std::string enum_text(Enum value, const EnumText<Enum> (&names)[N], const char* type) {
    for (const EnumText<Enum>& entry : names)
        if (entry.value == value) return entry.name;
    using Number = std::underlying_type_t<Enum>;
    const auto number = static_cast<Number>(value);
    std::string digits;
    if constexpr (std::is_signed_v<Number>)
        digits = std::to_string(static_cast<long long>(number));
    else
        digits = std::to_string(static_cast<unsigned long long>(number));
    return std::string(type) + "(" + digits + ")";
}

}  // namespace cudacore::detail
