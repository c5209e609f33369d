// The ranks of one node working as one: their communicator, the pool of their compiles on the
// node's first rank (compile_distributed with child processes), and how the others wait for it.
#pragma once

#include "cudacore/mpi_transfer.hpp"

#include <sched.h>

#include <cstdint>
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

// How the node's other ranks wait for its first rank to finish the pool: asleep in the kernel
// (a futex on a word in memory the node's ranks share, MPI_Win_allocate_shared) until the first
// rank sets the word and wakes them. A blocking MPI call would poll on their CPUs; a loop that
// tests and sleeps a millisecond woke each of them about a thousand times a second, taking CPU
// from the children and keeping cores awake beside the PCH build that every child waits for.
// With one rank on the node nothing is allocated and nobody waits.
class NodeWait {
public:
    // Collective over `node`; `leads`: this rank is the node's first. Throws MpiError.
    NodeWait(const NodeComm& node, bool leads);
    NodeWait(const NodeWait&) = delete;
    NodeWait& operator=(const NodeWait&) = delete;
    // Frees the shared word if done() did not (an error in between); on the first rank, wakes
    // the others first. Never throws.
    ~NodeWait();
    // The first rank: wakes the others. The others: sleep until then (looking again every
    // second, without a bound: the first rank's work ends or MPI ends the job). Then collective:
    // frees the shared word. Throws MpiError.
    void done();

private:
    void wake() noexcept;
    MPI_Win window_ = MPI_WIN_NULL;
    std::uint32_t* word_ = nullptr;  // 0 while the first rank works, then 1
    bool leads_ = false;
};

}  // namespace cudacore::mpi::detail
