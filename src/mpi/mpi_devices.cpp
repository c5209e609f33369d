// local_device: the GPU of this rank, from its place among the ranks of its node.
#include "cudacore/mpi_devices.hpp"

#include "mpi/mpi_support.hpp"
#include "mpi/node_pool.hpp"

#include "cudacore/system.hpp"

namespace cudacore::mpi {

NodeRank node_rank(MPI_Comm comm) {
    detail::require_mpi("cudacore::mpi::node_rank");
    const detail::NodeComm node(comm);
    return {detail::rank_of(node.get()), detail::size_of(node.get())};
}

int device_ordinal_for(NodeRank node, int device_count, bool allow_sharing) {
    if (device_count < 1) {
        throw InvalidArgumentError("cudacore::mpi::local_device: this node has no CUDA device (node rank " +
                                   std::to_string(node.rank) + " of " + std::to_string(node.size) + ")");
    }
    if (node.size > device_count && !allow_sharing) {
        throw InvalidArgumentError(
            "cudacore::mpi::local_device: " + std::to_string(node.size) + " ranks run on this node but it has " +
            std::to_string(device_count) + " device" + (device_count == 1 ? "" : "s") +
            "; start at most that many ranks per node, or pass allow_sharing = true to let ranks share devices");
    }
    return node.rank % device_count;
}

Device local_device(MPI_Comm comm, bool allow_sharing) {
    const NodeRank node = node_rank(comm);
    return Device(device_ordinal_for(node, system::device_count(), allow_sharing));
}

}  // namespace cudacore::mpi
