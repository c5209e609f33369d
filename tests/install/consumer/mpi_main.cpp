#include <cudacore/mpi.hpp>

#include <cstdio>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    const cudacore::mpi::NodeRank node = cudacore::mpi::node_rank(MPI_COMM_WORLD);
    std::printf("cudacore::mpi rank %d of %d\n", node.rank, node.size);
    MPI_Finalize();
    return 0;
}
