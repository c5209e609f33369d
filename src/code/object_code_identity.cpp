// ObjectCode's identity (declared in cudacore/object_code.hpp, listed in cudacore/identity.hpp):
// a value hash (cached per shared state) and printing.
#include "cudacore/object_code.hpp"

#include "code/object_code_state.hpp"

#include <xxhash.h>  // inlined into the library (XXH_INLINE_ALL, set in CMakeLists.txt)

#include <ostream>

namespace cudacore {

std::string to_string(const ObjectCode& code) {
    std::string out(to_string(code.code_type()));
    if (!code.name().empty()) out += " '" + code.name() + "'";
    out += " (" + std::to_string(code.size()) + " bytes";
    const std::size_t symbols = code.symbol_map().size();
    if (symbols != 0) out += ", " + std::to_string(symbols) + (symbols == 1 ? " symbol" : " symbols");
    return out + ")";
}

std::ostream& operator<<(std::ostream& out, const ObjectCode& code) { return out << to_string(code); }

}  // namespace cudacore

// std::hash<ObjectCode> (object_code.hpp): the value hash, computed once per shared state.
std::size_t std::hash<cudacore::ObjectCode>::operator()(const cudacore::ObjectCode& code) const noexcept {
    cudacore::detail::ObjectCodeState& state = *cudacore::detail::ObjectCodeAccess::state(code);
    std::uint64_t cached = state.value_hash.load(std::memory_order_relaxed);
    if (cached != 0) [[likely]] return static_cast<std::size_t>(cached);
    // Everything operator== compares: the bytes, then the type, name and symbol map folded in
    // as the seed of the following parts (two threads computing it at once agree).
    std::uint64_t hash = XXH3_64bits(state.code.data(), state.code.size());
    hash = XXH3_64bits_withSeed(state.name.data(), state.name.size(),
                                hash ^ static_cast<std::uint64_t>(state.type));
    for (const auto& [expression, lowered] : state.symbols) {
        hash = XXH3_64bits_withSeed(expression.data(), expression.size(), hash);
        hash = XXH3_64bits_withSeed(lowered.data(), lowered.size(), hash);
    }
    if (hash == 0) hash = 1;  // 0 means "not computed"
    state.value_hash.store(hash, std::memory_order_relaxed);
    return static_cast<std::size_t>(hash);
}
