// For tests run under mpirun (tests/cpu/mpi): every test is a TEST_F of MpiTest, whose TearDown
// makes all ranks agree on the outcome, so a failure on any rank fails the test on every rank.
// mpi_test_main.cpp initializes MPI and makes the exit code agreed too.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <string>

namespace cudacore::test {

int mpi_rank(MPI_Comm comm = MPI_COMM_WORLD);
int mpi_size(MPI_Comm comm = MPI_COMM_WORLD);
// Rank 0's string, on every rank (plain MPI, independent of the code under test).
std::string mpi_share(std::string text, MPI_Comm comm = MPI_COMM_WORLD);

class MpiTest : public ::testing::Test {
protected:
    // Skips unless there are at least 4 ranks (the tests are written for mpiexec -n 4).
    void SetUp() override;
    void TearDown() override;
};

}  // namespace cudacore::test
