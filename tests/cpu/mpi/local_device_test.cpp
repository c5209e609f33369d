// local_device under mpiexec -n 4 (all ranks on one node): node ranks, the device choice, and the
// errors without a driver or with more ranks than devices.
#include "mpi_test_support.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/mpi.hpp"
#include "cudacore/system.hpp"

#include <algorithm>
#include <set>

namespace {

using namespace cudacore;
using cudacore::test::MpiTest;
using cudacore::test::mpi_rank;
using cudacore::test::mpi_size;

TEST_F(MpiTest, NodeRanksAreDistinctAndCoverTheNode) {
    const mpi::NodeRank node = mpi::node_rank(MPI_COMM_WORLD);
    EXPECT_EQ(node.size, mpi_size());  // one machine
    std::vector<int> ranks(static_cast<std::size_t>(mpi_size()));
    MPI_Allgather(&node.rank, 1, MPI_INT, ranks.data(), 1, MPI_INT, MPI_COMM_WORLD);
    EXPECT_EQ(std::set<int>(ranks.begin(), ranks.end()).size(), ranks.size());
    EXPECT_EQ(*std::max_element(ranks.begin(), ranks.end()), mpi_size() - 1);

    // A sub-communicator of the odd ranks sees only its own members.
    MPI_Comm odd = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, mpi_rank() % 2, mpi_rank(), &odd);
    const mpi::NodeRank sub = mpi::node_rank(odd);
    EXPECT_EQ(sub.size, mpi_size() / 2 + (mpi_rank() % 2 == 0 ? mpi_size() % 2 : 0));
    EXPECT_EQ(sub.rank, mpi_rank() / 2);
    MPI_Comm_free(&odd);
}

TEST_F(MpiTest, DeviceOrdinalIsTheNodeRankModuloTheDeviceCount) {
    EXPECT_EQ(mpi::device_ordinal_for({0, 2}, 2, false), 0);
    EXPECT_EQ(mpi::device_ordinal_for({1, 2}, 2, false), 1);
    EXPECT_EQ(mpi::device_ordinal_for({1, 2}, 8, false), 1);
    EXPECT_EQ(mpi::device_ordinal_for({3, 4}, 2, true), 1);
    EXPECT_EQ(mpi::device_ordinal_for({2, 4}, 1, true), 0);
    try {
        mpi::device_ordinal_for({3, 4}, 2, false);
        ADD_FAILURE() << "no exception";
    } catch (const InvalidArgumentError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("4 ranks"), std::string::npos) << what;
        EXPECT_NE(what.find("2 devices"), std::string::npos) << what;
        EXPECT_NE(what.find("allow_sharing"), std::string::npos) << what;
    }
    EXPECT_THROW(mpi::device_ordinal_for({0, 1}, 0, true), InvalidArgumentError);
}

TEST_F(MpiTest, LocalDeviceNeedsADriverAndEnoughDevicesUnlessShared) {
    if (!system::driver_available()) {
        EXPECT_THROW(mpi::local_device(MPI_COMM_WORLD, true), NoDriverError);
        return;
    }
    const int devices = system::device_count();
    const int expected = devices > 0 ? mpi_rank() % devices : -1;
    if (devices > 0) EXPECT_EQ(mpi::local_device(MPI_COMM_WORLD, true).ordinal(), expected);
    if (devices < mpi_size()) {
        EXPECT_THROW(mpi::local_device(MPI_COMM_WORLD, false), InvalidArgumentError);
    } else {
        EXPECT_EQ(mpi::local_device(MPI_COMM_WORLD, false).ordinal(), expected);
    }
}

}  // namespace
