/// @file
/// cudacore::mpi, picking each rank's GPU (the contract of every call: mpi.hpp).
#pragma once

#include "cudacore/device.hpp"

#include <mpi.h>

namespace cudacore::mpi {

/// This rank's place among the ranks of its node (MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)).
struct NodeRank {
    int rank = 0;  ///< 0-based, in the order of `comm`'s ranks
    int size = 1;  ///< ranks of `comm` on this node
};
/// This rank's NodeRank in `comm`. Collective.
NodeRank node_rank(MPI_Comm comm);

/// node.rank modulo device_count; InvalidArgumentError for none, or sharing not allowed.
int device_ordinal_for(NodeRank node, int device_count, bool allow_sharing);

/// The GPU for this rank. Collective. NoDriverError, InvalidArgumentError as device_ordinal_for.
Device local_device(MPI_Comm comm, bool allow_sharing = false);

}  // namespace cudacore::mpi
