// compile_distributed under mpiexec -n 4: same results as one process, compile errors reach every
// rank, jobs must agree, and the program cache saves compiles.
#include "mpi_test_support.hpp"
#include "test_support.hpp"

#include "cudacore/cache_key.hpp"
#include "cudacore/cached_compile.hpp"
#include "cudacore/disk_program_cache.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/mpi.hpp"

#include <algorithm>
#include <memory>

namespace {

using namespace cudacore;
using cudacore::test::MpiTest;
using cudacore::test::mpi_rank;
using cudacore::test::mpi_share;
using cudacore::test::mpi_size;

constexpr int job_count = 32;

std::string source_of(int i) {
    return "template <int N> __global__ void scale(float* data) { data[threadIdx.x] *= N + " +
           std::to_string(i) + "; }\n";
}

std::vector<mpi::CompileJob> jobs_of(int count, const std::string& (*broken)(int) = nullptr) {
    std::vector<mpi::CompileJob> jobs;
    for (int i = 0; i < count; ++i) {
        ProgramOptions options;
        options.arch = "sm_90";
        options.name = "job " + std::to_string(i);
        std::string source = source_of(i);
        if (broken && !broken(i).empty()) source = broken(i);
        jobs.push_back({Program(source, SourceType::cxx, options), {"scale<" + std::to_string(i % 5) + ">"}});
    }
    return jobs;
}

std::string concatenated(const std::vector<ObjectCode>& codes) {
    std::string all;
    for (const auto& code : codes) all += code.serialize();
    return all;
}

// Rank 0 compiles every job alone; every rank gets the serialized result to compare with.
const std::string& reference() {
    static const std::string bytes = [] {
        std::string mine;
        if (mpi_rank() == 0) {
            std::vector<ObjectCode> codes;
            for (auto& job : jobs_of(job_count)) codes.push_back(job.program.compile(CodeType::cubin, job.name_expressions));
            mine = concatenated(codes);
        }
        return mpi_share(mine);
    }();
    return bytes;
}

// Sum over ranks.
std::uint64_t total(std::uint64_t mine) {
    std::uint64_t sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    return sum;
}

TEST_F(MpiTest, SharesAreBalancedAndDeterministic) {
    for (int ranks : {1, 3, 4, 8}) {
        std::vector<int> load(ranks);
        for (std::size_t i = 0; i < 64; ++i) ++load[mpi::compile_owner(i, ranks)];
        EXPECT_LE(*std::max_element(load.begin(), load.end()) - *std::min_element(load.begin(), load.end()), 1);
    }
    EXPECT_EQ(mpi::compile_owner(5, 4), 1);
}

TEST_F(MpiTest, ThirtyTwoProgramsEqualCompilingThemInOneProcess) {
    auto jobs = jobs_of(job_count);
    const auto codes = mpi::compile_distributed(MPI_COMM_WORLD, jobs, CodeType::cubin);
    ASSERT_EQ(codes.size(), static_cast<std::size_t>(job_count));
    for (int i = 0; i < job_count; ++i) {
        EXPECT_EQ(codes[i].name(), "job " + std::to_string(i));
        EXPECT_EQ(codes[i].symbol_map().count("scale<" + std::to_string(i % 5) + ">"), 1u);
    }
    EXPECT_EQ(concatenated(codes), reference());
}

const std::string& broken_source(int i) {
    static const std::string none;
    static const std::string bad = "__global__ void broken() { undeclared_thing = 1; }\n";
    return (i == 5 || i == 6 || i == 9) ? bad : none;
}

TEST_F(MpiTest, ACompileErrorOnOneRankIsRaisedOnEveryRank) {
    auto jobs = jobs_of(job_count, broken_source);
    // Jobs 5 and 9 are rank 1's, job 6 is rank 2's: the lowest failing job, 5, is reported.
    try {
        mpi::compile_distributed(MPI_COMM_WORLD, jobs, CodeType::cubin);
        ADD_FAILURE() << "no exception";
    } catch (const CompileError& e) {
        EXPECT_EQ(e.program_name(), "job 5");
        EXPECT_NE(e.log().find("undeclared_thing"), std::string::npos) << e.log();
        EXPECT_FALSE(e.options().empty());
        if (mpi_rank() != 1) EXPECT_NE(std::string(e.what()).find("on rank 1"), std::string::npos) << e.what();
    }
    // Nobody is left waiting: the next collective works.
    auto good = jobs_of(2);
    EXPECT_EQ(mpi::compile_distributed(MPI_COMM_WORLD, good, CodeType::ptx).size(), 2u);
}

TEST_F(MpiTest, RanksWithDifferentJobsAreRefusedOnEveryRank) {
    auto jobs = jobs_of(4);
    if (mpi_rank() == mpi_size() - 1) jobs[2].name_expressions = {"scale<9>"};
    EXPECT_THROW(mpi::compile_distributed(MPI_COMM_WORLD, jobs, CodeType::ptx), InvalidArgumentError);
    auto fewer = jobs_of(mpi_rank() == 0 ? 3 : 4);
    EXPECT_THROW(mpi::compile_distributed(MPI_COMM_WORLD, fewer, CodeType::ptx), InvalidArgumentError);
}

TEST_F(MpiTest, ASharedCacheDirectorySavesCompilesAcrossRanks) {
    std::unique_ptr<cudacore::test::TempDir> temp;
    if (mpi_rank() == 0) temp = std::make_unique<cudacore::test::TempDir>();
    const std::filesystem::path directory = mpi_share(temp ? (temp->path() / "cache").string() : "");

    // Rank 0 compiles the first 8 jobs into the shared cache beforehand.
    if (mpi_rank() == 0) {
        DiskProgramCache cache(directory);
        auto jobs = jobs_of(8);
        for (auto& job : jobs) compile_cached(cache, job.program, CodeType::cubin, job.name_expressions);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    {
        DiskProgramCache cache(directory);
        auto jobs = jobs_of(job_count);
        const auto codes = mpi::compile_distributed(MPI_COMM_WORLD, jobs, CodeType::cubin, {.cache = &cache});
        EXPECT_EQ(concatenated(codes), reference());
        // A C++ program takes two entries (its code, and the list of headers it read, whose
        // digest keys the code): each counts a hit or an insertion.
        EXPECT_EQ(total(cache.stats().hits), 2u * 8u);
        EXPECT_EQ(total(cache.stats().insertions), 2u * static_cast<std::uint64_t>(job_count - 8));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    {
        // A second run compiles nothing.
        DiskProgramCache cache(directory);
        auto jobs = jobs_of(job_count);
        const auto codes = mpi::compile_distributed(MPI_COMM_WORLD, jobs, CodeType::cubin, {.cache = &cache});
        EXPECT_EQ(concatenated(codes), reference());
        EXPECT_EQ(total(cache.stats().hits), 2u * static_cast<std::uint64_t>(job_count));
        EXPECT_EQ(total(cache.stats().insertions), 0u);
        EXPECT_EQ(cache.stats().entries, 2u * static_cast<std::uint64_t>(job_count));
    }
    MPI_Barrier(MPI_COMM_WORLD);  // before rank 0 removes the directory
}

TEST_F(MpiTest, PrivateCachesCanKeepWhatOtherRanksCompiled) {
    cudacore::test::TempDir temp;  // one per rank
    DiskProgramCache cache(temp.path() / "cache");
    auto jobs = jobs_of(job_count);
    const auto codes = mpi::compile_distributed(MPI_COMM_WORLD, jobs, CodeType::cubin,
                                                {.cache = &cache, .cache_received = true});
    EXPECT_EQ(concatenated(codes), reference());
    // Every job's code, plus a header list for each job this rank compiled itself.
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    EXPECT_GE(cache.stats().entries, static_cast<std::uint64_t>(job_count));
    EXPECT_LE(cache.stats().entries, static_cast<std::uint64_t>(job_count + (job_count + size - 1) / size));
    EXPECT_EQ(cache.stats().hits, 0u);
    // Now every rank finds every job in its own cache.
    for (int i = 0; i < job_count; ++i) {
        EXPECT_TRUE(cache.get(cache_key(jobs[i].program, CodeType::cubin, jobs[i].name_expressions))) << i;
    }
}

}  // namespace
