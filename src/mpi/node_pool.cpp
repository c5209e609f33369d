#include "mpi/node_pool.hpp"

#include "mpi/mpi_support.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <ctime>
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

namespace {

long futex(std::uint32_t* word, int operation, std::uint32_t value, const timespec* timeout) {
    // Not FUTEX_PRIVATE_FLAG: the word is shared between processes.
    return ::syscall(SYS_futex, word, operation, value, timeout, nullptr, 0);
}

}  // namespace

NodeWait::NodeWait(const NodeComm& node, bool leads) : leads_(leads) {
    if (size_of(node.get()) == 1) return;
    const char* object = "the word this node's ranks wait on (compile_distributed)";
    void* mine = nullptr;
    check(MPI_Win_allocate_shared(leads ? MPI_Aint{64} : MPI_Aint{0}, 1, MPI_INFO_NULL, node.get(), &mine,
                                  &window_),
          "MPI_Win_allocate_shared", object);
    MPI_Aint size = 0;
    int unit = 0;
    void* first = nullptr;
    // The first rank of the node is rank 0 of `node` (pool_on_node).
    check(MPI_Win_shared_query(window_, 0, &size, &unit, &first), "MPI_Win_shared_query", object);
    word_ = static_cast<std::uint32_t*>(first);
    if (leads) std::atomic_ref<std::uint32_t>(*word_).store(0);
    // Nobody looks at the word before the first rank has cleared it.
    check(MPI_Barrier(node.get()), "MPI_Barrier", object);
}

NodeWait::~NodeWait() {
    if (window_ == MPI_WIN_NULL) return;
    if (leads_) wake();
    MPI_Win_free(&window_);
}

void NodeWait::wake() noexcept {
    std::atomic_ref<std::uint32_t>(*word_).store(1);
    futex(word_, FUTEX_WAKE, INT_MAX, nullptr);
}

void NodeWait::done() {
    if (window_ == MPI_WIN_NULL) return;
    if (leads_) {
        wake();
    } else {
        const timespec second{1, 0};
        // EAGAIN (already set), EINTR or ETIMEDOUT: look again.
        while (std::atomic_ref<std::uint32_t>(*word_).load() == 0) futex(word_, FUTEX_WAIT, 0, &second);
    }
    check(MPI_Win_free(&window_), "MPI_Win_free", "the word this node's ranks wait on (compile_distributed)");
}

}  // namespace cudacore::mpi::detail
