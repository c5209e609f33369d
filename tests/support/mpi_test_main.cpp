// main() of the MPI tests: every rank runs every test; outcomes are agreed per test (MpiTest) and
// for the exit code. Only rank 0 prints the usual report; other ranks print their failures.
#include "mpi_test_support.hpp"

#include <cstdio>

namespace cudacore::test {

int mpi_rank(MPI_Comm comm) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    return rank;
}

int mpi_size(MPI_Comm comm) {
    int size = 0;
    MPI_Comm_size(comm, &size);
    return size;
}

std::string mpi_share(std::string text, MPI_Comm comm) {
    unsigned long long size = text.size();
    MPI_Bcast(&size, 1, MPI_UNSIGNED_LONG_LONG, 0, comm);
    text.resize(size);
    MPI_Bcast(text.data(), static_cast<int>(size), MPI_CHAR, 0, comm);
    return text;
}

void MpiTest::SetUp() {
    if (mpi_size() < 4) GTEST_SKIP() << "needs at least 4 ranks: run under mpiexec -n 4 (CTest does)";
}

void MpiTest::TearDown() {
    int failed_here = HasFailure() ? 1 : 0;
    int failed_ranks = 0;
    MPI_Allreduce(&failed_here, &failed_ranks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (failed_ranks > failed_here) {
        ADD_FAILURE() << "failed on " << (failed_ranks - failed_here) << " other rank(s)";
    }
}

namespace {

// On ranks other than 0: print failures only, tagged with the rank.
class FailurePrinter : public ::testing::EmptyTestEventListener {
public:
    explicit FailurePrinter(int rank) : rank_(rank) {}
    void OnTestPartResult(const ::testing::TestPartResult& result) override {
        if (!result.failed()) return;
        std::fprintf(stderr, "[rank %d] %s:%d: %s\n", rank_, result.file_name() ? result.file_name() : "?",
                     result.line_number(), result.message());
    }

private:
    int rank_;
};

}  // namespace
}  // namespace cudacore::test

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    ::testing::InitGoogleTest(&argc, argv);
    const int rank = cudacore::test::mpi_rank();
    if (rank != 0) {
        auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
        delete listeners.Release(listeners.default_result_printer());
        listeners.Append(new cudacore::test::FailurePrinter(rank));
    }
    int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
    int any_failed = 0;
    MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return any_failed;
}
