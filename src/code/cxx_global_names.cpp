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

}  // namespace

std::optional<std::string> lowered_global_of_cxx_name(std::string_view cxx_name,
                                                      const std::vector<std::string>& lowered_names) {
    std::optional<std::string> found;
    for (const std::string& lowered : lowered_names) {
        if (lowered == cxx_name) return std::nullopt;  // a plain name: the driver's lookup stands
        if (!found && demangled(lowered) == cxx_name) found = lowered;
    }
    return found;
}

}  // namespace cudacore::detail
