// The ranks of one node working as one: their communicator, the pool of their compiles on the
// node's first rank (compile_distributed with child processes), and a barrier that sleeps.
#pragma once

#include "cudacore/mpi.hpp"

#include <sched.h>

#include <vector>

namespace cudacore::mpi::detail {

// The CPUs this process may run on, as its affinity says (mpirun binds ranks to cores or
// sockets unless told otherwise); all of the machine's when the affinity cannot be read.
cpu_set_t allowed_cpus();

// The ranks of this node (MPI_Comm_split_type with MPI_COMM_TYPE_SHARED), freed with the object.
// Collective over `comm`; throws MpiError.
class NodeComm {
public:
    explicit NodeComm(MPI_Comm comm);
    NodeComm(const NodeComm&) = delete;
    NodeComm& operator=(const NodeComm&) = delete;
    ~NodeComm();
    MPI_Comm get() const { return node_; }

private:
    MPI_Comm node_ = MPI_COMM_NULL;
};

// With child processes the ranks of a node pool their compiles on the node's first rank: one
// automatic PCH per node instead of one per rank (a PCH serves only the process that made it and
// its children), its children running on the CPUs of all the node's ranks.
struct NodePool {
    std::vector<int> compiler;  // for each rank of `comm`: the first rank of its node
    cpu_set_t cpus;             // on a node's first rank: its ranks' CPUs together; else empty
    int node_size = 1;          // ranks on this node
    bool leads = false;         // this rank is its node's first
};

// Collective over `comm` (and `node`, this rank's NodeComm of it); throws MpiError.
NodePool pool_on_node(MPI_Comm comm, const NodeComm& node);

// A barrier of the node's ranks that sleeps while it waits (a millisecond between tests), so that
// ranks waiting for their node's first rank leave their CPUs to its children: a blocking MPI call
// polls on them. Throws MpiError.
void wait_for_node(const NodeComm& node);

}  // namespace cudacore::mpi::detail
