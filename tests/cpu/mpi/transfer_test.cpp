// cudacore::mpi transfers under mpiexec -n 4: broadcast, all_gather, chunking, failures agreed
// on every rank, corrupted messages.
#include "mpi_test_support.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/mpi.hpp"

#include "mpi/mpi_support.hpp"

#include <random>

namespace {

using namespace cudacore;
using cudacore::test::MpiTest;
using cudacore::test::mpi_rank;
using cudacore::test::mpi_size;

// Deterministic codes that every rank can build, so that each can check what it received.
ObjectCode made_code(int seed, std::size_t size) {
    std::mt19937 random(static_cast<unsigned>(seed));
    std::string bytes(size, '\0');
    for (auto& byte : bytes) byte = static_cast<char>(random() & 0xff);
    SymbolMap symbols{{"kernel<" + std::to_string(seed) + ">", "_Z6kernelILi" + std::to_string(seed) + "EEvv"}};
    return ObjectCode::from_cubin(std::move(bytes), "code " + std::to_string(seed), std::move(symbols));
}

std::vector<ObjectCode> made_codes(int first, int count) {
    std::vector<ObjectCode> codes;
    for (int i = 0; i < count; ++i) codes.push_back(made_code(first + i, 100 + 997 * static_cast<std::size_t>(i)));
    return codes;
}

void expect_identical(const std::vector<ObjectCode>& got, const std::vector<ObjectCode>& expected) {
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i], expected[i]) << "code " << i;
        EXPECT_EQ(got[i].serialize(), expected[i].serialize()) << "code " << i;
        EXPECT_FALSE(got[i].is_loaded());
    }
}

TEST_F(MpiTest, BroadcastGivesTheRootsCodeOnEveryRank) {
    for (int root = 0; root < mpi_size(); ++root) {
        const ObjectCode expected = made_code(40 + root, 5000);
        std::optional<ObjectCode> mine;
        if (mpi_rank() == root) mine = expected;
        const ObjectCode got = mpi::broadcast(mine, root, MPI_COMM_WORLD);
        expect_identical({got}, {expected});
    }
}

TEST_F(MpiTest, BroadcastOfALargeCodeIsIdentical) {
    // Several of broadcast()'s pieces and a partial one.
    const ObjectCode expected = made_code(11, (std::size_t{3} << 20) + 5);
    const ObjectCode got = mpi::broadcast(mpi_rank() == 0 ? std::optional<ObjectCode>(expected) : std::nullopt, 0,
                                          MPI_COMM_WORLD);
    expect_identical({got}, {expected});
}

TEST_F(MpiTest, AReceivedPtxEndsWithANulLikeAString) {
    // The driver reads PTX as a C string: received bytes must end as a std::string's do.
    const ObjectCode expected = ObjectCode::from_ptx(std::string(3000, 'x'), "ptx");
    const ObjectCode got = mpi::broadcast(mpi_rank() == 0 ? std::optional<ObjectCode>(expected) : std::nullopt, 0,
                                          MPI_COMM_WORLD);
    EXPECT_EQ(got, expected);
    EXPECT_EQ(got.code().data()[got.size()], '\0');
}

TEST_F(MpiTest, BroadcastOfAListKeepsOrderAndEmptyListsWork) {
    const auto expected = made_codes(1, 6);
    const int root = mpi_size() - 1;
    const auto got = mpi::broadcast(mpi_rank() == root ? expected : std::vector<ObjectCode>{}, root, MPI_COMM_WORLD);
    expect_identical(got, expected);
    EXPECT_TRUE(mpi::broadcast(std::vector<ObjectCode>{}, 0, MPI_COMM_WORLD).empty());
}

TEST_F(MpiTest, BroadcastInSmallChunksIsIdentical) {
    const auto expected = made_codes(7, 4);
    for (std::size_t chunk : {1u, 7u, 4096u}) {
        const auto got = mpi::broadcast(mpi_rank() == 1 ? expected : std::vector<ObjectCode>{}, 1,
                                        MPI_COMM_WORLD, {.chunk_bytes = chunk});
        expect_identical(got, expected);
    }
    std::string bytes;
    if (mpi_rank() == 0) bytes = mpi::pack(expected);
    const std::string reference = mpi::pack(expected);
    mpi::broadcast_bytes(bytes, 0, MPI_COMM_WORLD, {.chunk_bytes = 13});
    EXPECT_EQ(bytes, reference);
}

TEST_F(MpiTest, AllGatherGivesEveryRanksCodesInRankOrder) {
    const int size = mpi_size();
    const auto all = mpi::all_gather(made_code(100 + mpi_rank(), 3000 + 10 * mpi_rank()), MPI_COMM_WORLD);
    ASSERT_EQ(all.size(), static_cast<std::size_t>(size));
    for (int r = 0; r < size; ++r) expect_identical({all[r]}, {made_code(100 + r, 3000 + 10 * r)});

    // Lists of different lengths (rank r sends r codes), whole and in chunks smaller than a rank's share.
    for (std::size_t chunk : {std::size_t{1} << 30, std::size_t{3}, std::size_t{64}}) {
        const auto lists = mpi::all_gather(made_codes(10 * mpi_rank(), mpi_rank()), MPI_COMM_WORLD,
                                           {.chunk_bytes = chunk});
        ASSERT_EQ(lists.size(), static_cast<std::size_t>(size));
        for (int r = 0; r < size; ++r) expect_identical(lists[r], made_codes(10 * r, r));
    }
}

TEST_F(MpiTest, ARootWithoutCodeFailsOnEveryRank) {
    try {
        mpi::broadcast(std::optional<ObjectCode>{}, 2, MPI_COMM_WORLD);
        ADD_FAILURE() << "no exception";
    } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("passed no ObjectCode"), std::string::npos) << e.what();
        if (mpi_rank() != 2) EXPECT_NE(std::string(e.what()).find("rank 2"), std::string::npos) << e.what();
    }
    // The communicator is still usable afterwards.
    expect_identical(mpi::broadcast(std::vector<ObjectCode>{made_code(1, 50)}, 0, MPI_COMM_WORLD), {made_code(1, 50)});
}

TEST_F(MpiTest, BadArgumentsFailOnEveryRankWithoutCommunicating) {
    EXPECT_THROW(mpi::broadcast(made_codes(0, 1), mpi_size(), MPI_COMM_WORLD), InvalidArgumentError);
    EXPECT_THROW(mpi::broadcast(made_codes(0, 1), -1, MPI_COMM_WORLD), InvalidArgumentError);
    EXPECT_THROW(mpi::broadcast(made_codes(0, 1), 0, MPI_COMM_WORLD, {.chunk_bytes = 0}), InvalidArgumentError);
    EXPECT_THROW(mpi::all_gather(made_codes(0, 1), MPI_COMM_WORLD, {.chunk_bytes = std::size_t{1} << 31}),
                 InvalidArgumentError);
}

TEST_F(MpiTest, ACorruptedMessageIsASerializationErrorOnEveryRank) {
    const int victim = mpi_size() - 1;
    // (part, offset): the frame's magic, a length in the frame, a head field, a byte of each
    // code, each code's checksum.
    const std::pair<std::size_t, std::size_t> flips[] = {{0, 3}, {0, 20}, {0, 40}, {1, 5000}, {2, 7}, {3, 2}, {3, 13}};
    for (const auto& [part, offset] : flips) {
        mpi::detail::set_receive_filter([&, part = part, offset = offset](std::string& bytes, std::size_t which) {
            if (mpi_rank() == victim && which == part) bytes[offset % bytes.size()] ^= 0x20;
        });
        try {
            mpi::broadcast(made_codes(3, 2), 0, MPI_COMM_WORLD);
            ADD_FAILURE() << "no exception for a flip in part " << part << " at " << offset;
        } catch (const SerializationError& e) {
            if (mpi_rank() != victim) {
                EXPECT_NE(std::string(e.what()).find("rank " + std::to_string(victim)), std::string::npos) << e.what();
            }
        }
        mpi::detail::set_receive_filter(nullptr);
    }
    // Truncated code bytes, a truncated frame and truncated checksums, too.
    for (std::size_t part : {0u, 1u, 3u}) {
        mpi::detail::set_receive_filter([part](std::string& bytes, std::size_t which) {
            if (which == part) bytes.resize(bytes.size() / 2);
        });
        EXPECT_THROW(mpi::broadcast(made_codes(3, 2), 0, MPI_COMM_WORLD), SerializationError) << "part " << part;
        mpi::detail::set_receive_filter(nullptr);
    }
    // And the communicator still works.
    expect_identical(mpi::broadcast(made_codes(3, 2), 0, MPI_COMM_WORLD), made_codes(3, 2));
}

TEST_F(MpiTest, UnpackRejectsEveryDamagedMessage) {
    const std::string message = mpi::pack(made_codes(5, 2));
    expect_identical(mpi::unpack(message), made_codes(5, 2));
    // Each rank checks its own slice of positions: a flipped byte anywhere is caught.
    for (std::size_t i = static_cast<std::size_t>(mpi_rank()); i < message.size(); i += 37u * mpi_size()) {
        std::string damaged = message;
        damaged[i] ^= 0x01;
        EXPECT_THROW(mpi::unpack(damaged), SerializationError) << "flip at " << i;
    }
    for (std::size_t cut : {std::size_t{0}, std::size_t{7}, std::size_t{16}, message.size() - 1}) {
        EXPECT_THROW(mpi::unpack(std::string_view(message).substr(0, cut)), SerializationError) << "cut " << cut;
    }
    EXPECT_THROW(mpi::unpack(message + "x"), SerializationError);
    // A count far beyond the message is refused before anything is allocated for it.
    std::string huge = message;
    huge[8 + 7] = '\x7f';
    EXPECT_THROW(mpi::unpack(huge), SerializationError);
}

}  // namespace
