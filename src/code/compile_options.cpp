// compile_options.hpp's enumeration names.
#include "cudacore/compile_options.hpp"

#include "support/enum_text.hpp"

namespace cudacore {

std::string to_string(CompileStrategy strategy) {
    static constexpr detail::EnumText<CompileStrategy> names[] = {
        {CompileStrategy::threads, "threads"},
        {CompileStrategy::processes, "processes"},
    };
    return detail::enum_text(strategy, names, "CompileStrategy");
}

}  // namespace cudacore
