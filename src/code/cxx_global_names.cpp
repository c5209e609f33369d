#include "code/cxx_global_names.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace cudacore::detail {

namespace {

// `lowered` demangled (the Itanium ABI's, as NVRTC lowers names), or empty when it is no mangled
// name.
std::string demangled(const std::string& lowered) {
    if (!lowered.starts_with("_Z")) return {};
    int status = 0;
    const std::unique_ptr<char, decltype(&std::free)> text(
        abi::__cxa_demangle(lowered.c_str(), nullptr, nullptr, &status), &std::free);
    return status == 0 && text ? std::string(text.get()) : std::string();
}

// Whether demangling `lowered` can give `cxx_name` at a bounded cost. A mangled name is never
// much longer than its demangled form, and each back reference (S_, S0_, T_, ...) at most doubles
// the text, so that a name longer than twice `cxx_name` (and a little) or with more than 16
// references is not demangled: a few hundred bytes of references could otherwise ask for gigabytes
// (the names come from the cubin, which may come from anywhere).
bool may_demangle_to(const std::string& lowered, std::string_view cxx_name) {
    if (lowered.size() > 2 * cxx_name.size() + 16) return false;
    int references = 0;
    for (std::size_t i = 0; i + 1 < lowered.size(); ++i) {
        const char c = lowered[i], next = lowered[i + 1];
        if ((c == 'S' || c == 'T') && (next == '_' || (next >= '0' && next <= '9') || (next >= 'A' && next <= 'Z')))
            ++references;
    }
    return references <= 16;
}

}  // namespace

std::optional<std::string> lowered_global_of_cxx_name(std::string_view cxx_name,
                                                      const std::vector<std::string>& lowered_names) {
    std::optional<std::string> found;
    for (const std::string& lowered : lowered_names) {
        if (lowered == cxx_name) return std::nullopt;  // a plain name: the driver's lookup stands
        if (!found && may_demangle_to(lowered, cxx_name) && demangled(lowered) == cxx_name) found = lowered;
    }
    return found;
}

}  // namespace cudacore::detail
