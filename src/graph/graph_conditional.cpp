// The driver's flags for a conditional node's handle.
#include "cudacore/graph_conditional.hpp"

namespace cudacore {

unsigned conditional_handle_flags(const ConditionalHandleOptions& options) {
    return options.assign_default ? CU_GRAPH_COND_ASSIGN_DEFAULT : 0u;
}

}  // namespace cudacore
