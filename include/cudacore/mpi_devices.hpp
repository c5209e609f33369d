/// @file
/// cudacore::mpi, picking each rank's GPU: a rank's place on its node and the device it takes.
/// The contract every function of cudacore::mpi keeps is at the top of mpi.hpp.
#pragma once

#include "cudacore/device.hpp"

#include <mpi.h>

namespace cudacore::mpi {

/// This rank's place among the ranks of its node (MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)).
struct NodeRank {
    int rank = 0;  ///< 0-based, in the order of `comm`'s ranks
    int size = 1;  ///< ranks of `comm` on this node
};
/// This rank's NodeRank in `comm`. Collective over `comm`. InvalidArgumentError when MPI is not
/// initialised (or finalised), MpiError when an MPI call fails.
NodeRank node_rank(MPI_Comm comm);

/// The device ordinal for node rank `node.rank` on a node with `device_count` devices: node.rank
/// modulo device_count. Throws InvalidArgumentError when device_count < 1, or when there are more
/// ranks on the node than devices and `allow_sharing` is false.
int device_ordinal_for(NodeRank node, int device_count, bool allow_sharing);

/// The GPU for this rank: device_ordinal_for(node_rank(comm), system::device_count(),
/// allow_sharing). Collective. Throws NoDriverError without a driver, InvalidArgumentError as
/// device_ordinal_for (on every rank of the node, since they all see the same counts).
Device local_device(MPI_Comm comm, bool allow_sharing = false);

}  // namespace cudacore::mpi
