#include "mpi/node_pool.hpp"

#include "mpi/mpi_support.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

namespace cudacore::mpi::detail {

cpu_set_t allowed_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) {
        CPU_ZERO(&set);
        for (unsigned cpu = 0; cpu < std::max(1u, std::thread::hardware_concurrency()) && cpu < CPU_SETSIZE; ++cpu)
            CPU_SET(cpu, &set);
    }
    return set;
}

NodeComm::NodeComm(MPI_Comm comm) {
    check(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank_of(comm), MPI_INFO_NULL, &node_),
          "MPI_Comm_split_type", "MPI_COMM_TYPE_SHARED (the ranks of this node)");
}

NodeComm::~NodeComm() { MPI_Comm_free(&node_); }

NodePool pool_on_node(MPI_Comm comm, const NodeComm& node) {
    NodePool pool;
    const int size = size_of(comm);
    const int node_rank = rank_of(node.get());
    pool.node_size = size_of(node.get());
    pool.leads = node_rank == 0;
    int leader = rank_of(comm);
    check(MPI_Bcast(&leader, 1, MPI_INT, 0, node.get()), "MPI_Bcast",
          "the first rank of this node (compile_distributed)");
    pool.compiler.resize(static_cast<std::size_t>(size));
    check(MPI_Allgather(&leader, 1, MPI_INT, pool.compiler.data(), 1, MPI_INT, comm), "MPI_Allgather",
          "the first rank of each node (compile_distributed)");
    const cpu_set_t mine = allowed_cpus();
    std::vector<cpu_set_t> sets(pool.leads ? static_cast<std::size_t>(pool.node_size) : 1);
    check(MPI_Gather(&mine, sizeof mine, MPI_BYTE, sets.data(), sizeof mine, MPI_BYTE, 0, node.get()),
          "MPI_Gather", "the CPUs of this node's ranks (compile_distributed)");
    CPU_ZERO(&pool.cpus);
    if (pool.leads)
        for (const cpu_set_t& set : sets) CPU_OR(&pool.cpus, &pool.cpus, &set);
    return pool;
}

void wait_for_node(const NodeComm& node) {
    MPI_Request request = MPI_REQUEST_NULL;
    check(MPI_Ibarrier(node.get(), &request), "MPI_Ibarrier", "this node's ranks (compile_distributed)");
    for (int done = 0;;) {
        check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test",
              "this node's ranks (compile_distributed)");
        if (done) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

}  // namespace cudacore::mpi::detail
