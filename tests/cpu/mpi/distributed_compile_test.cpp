// compile_distributed under mpiexec -n 4: same results as one process, compile errors reach every
// rank, jobs must agree, and the program cache saves compiles.
#include "mpi_test_support.hpp"
#include "test_support.hpp"

#include "cudacore/cache_key.hpp"
#include "cudacore/cached_compile.hpp"
#include "cudacore/disk_program_cache.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/mpi.hpp"
#include "cudacore/warnings.hpp"

#include "mpi/node_pool.hpp"

#include <sched.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
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

// A cache directory that every rank sees (in `temp`, made on rank 0), into which rank 0 compiled
// the first `count` jobs beforehand.
std::filesystem::path cache_holding_first_jobs(std::unique_ptr<cudacore::test::TempDir>& temp, int count) {
    if (mpi_rank() == 0) temp = std::make_unique<cudacore::test::TempDir>();
    const std::filesystem::path directory = mpi_share(temp ? (temp->path() / "cache").string() : "");
    if (mpi_rank() == 0) {
        DiskProgramCache cache(directory);
        auto jobs = jobs_of(count);
        for (auto& job : jobs) compile_cached(job.program, CodeType::cubin, job.name_expressions, {.cache = &cache});
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return directory;
}

// The first rank (in MPI_COMM_WORLD) of the node `rank` runs on: with child processes, the one
// that compiles that rank's share.
int first_rank_on_node_of(int rank) {
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, mpi_rank(), MPI_INFO_NULL, &node);
    int first = mpi_rank();
    MPI_Bcast(&first, 1, MPI_INT, 0, node);
    MPI_Comm_free(&node);
    std::vector<int> firsts(static_cast<std::size_t>(mpi_size()));
    MPI_Allgather(&first, 1, MPI_INT, firsts.data(), 1, MPI_INT, MPI_COMM_WORLD);
    return firsts[static_cast<std::size_t>(rank)];
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
    // Jobs 5 and 9 are rank 1's, job 6 is rank 2's (with 4 ranks): the lowest failing job, 5, is
    // reported, from the rank that compiled it.
    const int failing_rank = mpi::compile_owner(5, mpi_size());
    try {
        mpi::compile_distributed(MPI_COMM_WORLD, jobs, CodeType::cubin);
        ADD_FAILURE() << "no exception";
    } catch (const CompileError& e) {
        EXPECT_EQ(e.program_name(), "job 5");
        EXPECT_NE(e.log().find("undeclared_thing"), std::string::npos) << e.log();
        EXPECT_FALSE(e.options().empty());
        if (mpi_rank() != failing_rank) {
            EXPECT_NE(std::string(e.what()).find("on rank " + std::to_string(failing_rank)), std::string::npos)
                << e.what();
        }
    }
    // Nobody is left waiting: the next collective works.
    auto good = jobs_of(2);
    EXPECT_EQ(mpi::compile_distributed(MPI_COMM_WORLD, good, CodeType::ptx).size(), 2u);
}

// All 32 jobs with `options`: the codes of compiling them in one process, in order.
void expect_the_same_codes_in_order(const CompileOptions& options) {
    auto jobs = jobs_of(job_count);
    const auto codes = mpi::compile_distributed(MPI_COMM_WORLD, jobs, CodeType::cubin, options);
    ASSERT_EQ(codes.size(), static_cast<std::size_t>(job_count));
    for (int i = 0; i < job_count; ++i) EXPECT_EQ(codes[i].name(), "job " + std::to_string(i));
    EXPECT_EQ(concatenated(codes), reference());
}

// Jobs 5 and 9 (rank 1's with 4 ranks, compiled at once with 4 workers) and 6 (rank 2's) fail:
// job 5's error and log reach every rank from `failing_rank` (the rank that compiled it), and the
// next collective works.
void expect_the_lowest_failing_job_to_win(const CompileOptions& options, int failing_rank) {
    auto jobs = jobs_of(job_count, broken_source);
    try {
        mpi::compile_distributed(MPI_COMM_WORLD, jobs, CodeType::cubin, options);
        ADD_FAILURE() << "no exception";
    } catch (const CompileError& e) {
        EXPECT_EQ(e.program_name(), "job 5");
        EXPECT_NE(e.log().find("undeclared_thing"), std::string::npos) << e.log();
        EXPECT_FALSE(e.options().empty());
        if (mpi_rank() != failing_rank) {
            EXPECT_NE(std::string(e.what()).find("on rank " + std::to_string(failing_rank)), std::string::npos)
                << e.what();
        }
    }
    auto good = jobs_of(3);
    EXPECT_EQ(mpi::compile_distributed(MPI_COMM_WORLD, good, CodeType::ptx, options).size(), 3u);
}

TEST_F(MpiTest, SeveralWorkersPerRankGiveTheSameCodesInOrder) {
    expect_the_same_codes_in_order({.workers = 3});
}

TEST_F(MpiTest, WithSeveralWorkersTheLowestFailingJobStillWins) {
    expect_the_lowest_failing_job_to_win({.workers = 4}, mpi::compile_owner(5, mpi_size()));
}

TEST_F(MpiTest, ChildProcessesPerRankGiveTheSameCodesInOrder) {
    expect_the_same_codes_in_order({.strategy = CompileStrategy::processes, .workers = 3});
}

TEST_F(MpiTest, WithChildProcessesTheLowestFailingJobStillWinsWithItsLog) {
    expect_the_lowest_failing_job_to_win({.strategy = CompileStrategy::processes, .workers = 4},
                                         first_rank_on_node_of(mpi::compile_owner(5, mpi_size())));
}

TEST_F(MpiTest, WithChildProcessesACacheIsLookedUpAndOnlyWhatThisProcessCompiledIsStored) {
    std::unique_ptr<cudacore::test::TempDir> temp;
    const std::filesystem::path directory = cache_holding_first_jobs(temp, 8);
    {
        DiskProgramCache cache(directory);
        auto jobs = jobs_of(job_count);
        CompileOptions options;
        options.cache = &cache;
        options.workers = 3;
        options.strategy = CompileStrategy::processes;
        const auto codes = mpi::compile_distributed(MPI_COMM_WORLD, jobs, CodeType::cubin, options);
        EXPECT_EQ(concatenated(codes), reference());
        // The ranks of a node pool their shares on its first rank, which looks them up (the
        // first 8 jobs hit) and compiles the first miss itself (it makes the automatic PCH),
        // which is stored; the misses its children compile are not. The other ranks of the node
        // compile and look up nothing.
        const bool first_on_node = first_rank_on_node_of(mpi_rank()) == mpi_rank();
        EXPECT_EQ(cache.stats().insertions, first_on_node ? 1u : 0u);
        EXPECT_EQ(total(cache.stats().hits), 1u * 8u);
        if (!first_on_node) EXPECT_EQ(cache.stats().hits + cache.stats().misses, 0u);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

// Restores this process's CPU affinity when it goes.
class AffinityGuard {
public:
    AffinityGuard() { sched_getaffinity(0, sizeof saved_, &saved_); }
    AffinityGuard(const AffinityGuard&) = delete;
    AffinityGuard& operator=(const AffinityGuard&) = delete;
    ~AffinityGuard() { sched_setaffinity(0, sizeof saved_, &saved_); }
    const cpu_set_t& saved() const { return saved_; }

private:
    cpu_set_t saved_;
};

// With child processes a node's jobs compile on its first rank, whose children run on the CPUs
// of all the node's ranks: here each rank is bound to one CPU of its own (as mpirun --bind-to
// core does), and the first rank's pool holds exactly those CPUs.
TEST_F(MpiTest, WithChildProcessesTheNodesFirstRankPoolsItsRanksCpus) {
    std::vector<int> firsts;
    for (int rank = 0; rank < mpi_size(); ++rank) firsts.push_back(first_rank_on_node_of(rank));
    const mpi::NodeRank node = mpi::node_rank(MPI_COMM_WORLD);
    std::vector<int> chosen(static_cast<std::size_t>(mpi_size()));
    mpi::detail::NodePool pool;
    {
        const AffinityGuard guard;
        std::vector<int> allowed;
        for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
            if (CPU_ISSET(cpu, &guard.saved())) allowed.push_back(cpu);
        if (allowed.empty()) allowed.push_back(0);  // no affinity to read: CPU 0
        int mine = allowed[static_cast<std::size_t>(node.rank) % allowed.size()];
        MPI_Allgather(&mine, 1, MPI_INT, chosen.data(), 1, MPI_INT, MPI_COMM_WORLD);
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(mine, &one);
        EXPECT_EQ(sched_setaffinity(0, sizeof one, &one), 0);  // no ASSERT: the others wait in collectives
        const mpi::detail::NodeComm comm(MPI_COMM_WORLD);
        pool = mpi::detail::pool_on_node(MPI_COMM_WORLD, comm);
        mpi::detail::NodeWait(comm, pool.leads).done();  // every rank of the node gets through
    }
    EXPECT_EQ(pool.node_size, node.size);
    EXPECT_EQ(pool.leads, node.rank == 0);
    cpu_set_t expected;
    CPU_ZERO(&expected);
    for (int rank = 0; rank < mpi_size(); ++rank) {
        const auto r = static_cast<std::size_t>(rank);
        EXPECT_EQ(pool.compiler[r], firsts[r]) << rank;
        if (pool.leads && firsts[r] == mpi_rank()) CPU_SET(chosen[r], &expected);
    }
    EXPECT_TRUE(CPU_EQUAL(&pool.cpus, &expected)) << CPU_COUNT(&pool.cpus) << " CPUs in the pool";
}

// With child processes the node's other ranks sleep while its first rank compiles: the waiting
// thread gives up its CPU a few times at most (a loop that tests and sleeps a millisecond did so
// a thousand times a second, taking CPU time from the children).
TEST_F(MpiTest, WithChildProcessesTheOtherRanksOfANodeSleepWhileItsFirstRankCompiles) {
    const bool waits = first_rank_on_node_of(mpi_rank()) != mpi_rank();
    if (total(waits ? 1 : 0) == 0) GTEST_SKIP() << "every rank is the first of its node: none waits";
    auto jobs = jobs_of(job_count);
    const auto blocked = [] {
        rusage usage{};
        getrusage(RUSAGE_THREAD, &usage);
        return usage.ru_nvcsw;
    };
    const long before = blocked();
    const auto start = std::chrono::steady_clock::now();
    const auto codes = mpi::compile_distributed(MPI_COMM_WORLD, jobs, CodeType::cubin,
                                                {.strategy = CompileStrategy::processes});
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const long woke = blocked() - before;
    EXPECT_EQ(concatenated(codes), reference());
    if (waits) EXPECT_LE(woke, 10 + static_cast<long>(20 * seconds)) << "in " << seconds << " s";
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
    const std::filesystem::path directory = cache_holding_first_jobs(temp, 8);
    {
        DiskProgramCache cache(directory);
        auto jobs = jobs_of(job_count);
        const auto codes = mpi::compile_distributed(MPI_COMM_WORLD, jobs, CodeType::cubin, {.cache = &cache});
        EXPECT_EQ(concatenated(codes), reference());
        // A C++ program that names no path takes one entry (its code, under the key of what
        // NVRTC was given): each counts a hit or an insertion.
        EXPECT_EQ(total(cache.stats().hits), 1u * 8u);
        EXPECT_EQ(total(cache.stats().insertions), 1u * static_cast<std::uint64_t>(job_count - 8));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    {
        // A second run compiles nothing.
        DiskProgramCache cache(directory);
        auto jobs = jobs_of(job_count);
        const auto codes = mpi::compile_distributed(MPI_COMM_WORLD, jobs, CodeType::cubin, {.cache = &cache});
        EXPECT_EQ(concatenated(codes), reference());
        EXPECT_EQ(total(cache.stats().hits), 1u * static_cast<std::uint64_t>(job_count));
        EXPECT_EQ(total(cache.stats().insertions), 0u);
        EXPECT_EQ(cache.stats().entries, 1u * static_cast<std::uint64_t>(job_count));
    }
    MPI_Barrier(MPI_COMM_WORLD);  // before rank 0 removes the directory
}

// Programs whose code keys differ from those of jobs_of's: a C++ program that includes a header
// (its code key adds the header's path and digest) and a PTX program (keyed by its source key).
const char* const including_source = R"(
#include "value.h"
extern "C" __global__ void store(int* out) { *out = STORED_VALUE; }
)";

mpi::CompileJob including_job(const std::filesystem::path& include_dir) {
    ProgramOptions options;
    options.arch = "sm_90";
    options.name = "with header";
    options.include_path = {include_dir.string()};
    return {Program(including_source, SourceType::cxx, options), {}};
}

void write_header(const std::filesystem::path& include_dir, int value) {
    std::filesystem::create_directories(include_dir);
    cudacore::test::write_file(include_dir / "value.h", "#define STORED_VALUE " + std::to_string(value) + "\n");
}

mpi::CompileJob ptx_job(const std::string& ptx) {
    ProgramOptions options;
    options.arch = "sm_90";
    options.name = "from ptx";
    return {Program(ptx, SourceType::ptx, options), {}};
}

// A directory made by rank 0 and seen by every rank (removed by rank 0 when the test ends: keep
// a barrier before that).
struct SharedDir {
    std::unique_ptr<cudacore::test::TempDir> temp;
    std::filesystem::path path;
    SharedDir() {
        if (mpi_rank() == 0) temp = std::make_unique<cudacore::test::TempDir>();
        path = mpi_share(temp ? temp->path().string() : "");
    }
};

// Forwards to another cache, running `before_put` first.
class HookedCache : public ProgramCache {
public:
    explicit HookedCache(ProgramCache& inner) : inner_(inner) {}
    std::optional<ObjectCode> get(const CacheKey& key) override { return inner_.get(key); }
    void put(const CacheKey& key, const ObjectCode& code) override {
        if (before_put) before_put(code);
        inner_.put(key, code);
    }
    CacheStats stats() const override { return inner_.stats(); }
    void clear() override { inner_.clear(); }
    std::function<void(const ObjectCode&)> before_put;

private:
    ProgramCache& inner_;
};

TEST_F(MpiTest, PrivateCachesKeepWhatOtherRanksCompiledWhereCompileCachedLooks) {
    SharedDir shared;
    const std::filesystem::path include_dir = shared.path / "include";
    if (mpi_rank() == 0) write_header(include_dir, 7);
    const std::string ptx = mpi_share(
        mpi_rank() == 0 ? std::string(Program("extern \"C\" __global__ void twice(float* d) { d[threadIdx.x] *= 2; }\n",
                                              SourceType::cxx, {.arch = "sm_90"})
                                          .compile(CodeType::ptx)
                                          .code())
                        : std::string());
    auto all_jobs = [&] {
        auto jobs = jobs_of(job_count);
        jobs.push_back(including_job(include_dir));  // job 32, rank 0's
        jobs.push_back(ptx_job(ptx));                // job 33, rank 1's
        return jobs;
    };

    cudacore::test::TempDir temp;  // one per rank
    {
        DiskProgramCache cache(temp.path() / "cache");
        auto jobs = all_jobs();
        const auto codes = mpi::compile_distributed(MPI_COMM_WORLD, jobs, CodeType::cubin,
                                                    {.cache = &cache}, {.cache_received = true});
        ASSERT_EQ(codes.size(), jobs.size());
        EXPECT_EQ(concatenated(std::vector<ObjectCode>(codes.begin(), codes.begin() + job_count)), reference());
        // Every job takes one entry (its code; no C++ job here names a path).
        EXPECT_EQ(cache.stats().entries, 1u * (job_count + 1) + 1);
        // Now every rank finds every job in its own cache, as compile_cached stored it.
        for (std::size_t i = 0; i < jobs.size(); ++i) {
            const auto found = find_cached(jobs[i].program, CodeType::cubin, jobs[i].name_expressions, {.cache = &cache});
            EXPECT_TRUE(found) << "job " << i;  // no ASSERT: every rank must reach the barrier
            if (found) EXPECT_EQ(*found, codes[i]) << "job " << i;
        }

        // And compile_cached compiles nothing: every lookup hits (a fresh cache object counts them).
        DiskProgramCache again(temp.path() / "cache");
        auto fresh = all_jobs();
        for (std::size_t i = 0; i < fresh.size(); ++i) {
            EXPECT_EQ(compile_cached(fresh[i].program, CodeType::cubin, fresh[i].name_expressions, {.cache = &again}), codes[i])
                << "job " << i;
        }
        EXPECT_EQ(again.stats().misses, 0u);
        EXPECT_EQ(again.stats().insertions, 0u);
        EXPECT_EQ(again.stats().hits, 1u * (job_count + 1) + 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);  // before rank 0 removes the shared directory
}

TEST_F(MpiTest, ReceivedCodeIsKeyedByTheHeadersItWasCompiledFrom) {
    SharedDir shared;
    const std::filesystem::path include_dir = shared.path / "include";
    if (mpi_rank() == 0) write_header(include_dir, 7);
    MPI_Barrier(MPI_COMM_WORLD);
    auto jobs = jobs_of(3);
    jobs.push_back(including_job(include_dir));  // job 3, rank 3's: compiled with STORED_VALUE 7

    cudacore::test::TempDir temp;  // one per rank
    DiskProgramCache disk(temp.path() / "cache");
    HookedCache cache(disk);
    // Rank 0 changes the header after rank 3 compiled, just before it stores rank 3's code: its
    // entry must still be keyed by the header rank 3 read, not by the one rank 0 sees now.
    if (mpi_rank() == 0) {
        cache.before_put = [&](const ObjectCode& code) {
            if (code.name() == "with header") write_header(include_dir, 8);
        };
    }
    const auto codes = mpi::compile_distributed(MPI_COMM_WORLD, jobs, CodeType::cubin,
                                                {.cache = &cache}, {.cache_received = true});
    ASSERT_EQ(codes.size(), jobs.size());
    MPI_Barrier(MPI_COMM_WORLD);

    // With the header edited, no rank finds code compiled from the old one.
    EXPECT_FALSE(find_cached(jobs[3].program, CodeType::cubin, {}, {.cache = &cache}));
    for (std::size_t i = 0; i < 3; ++i) {
        EXPECT_TRUE(find_cached(jobs[i].program, CodeType::cubin, jobs[i].name_expressions, {.cache = &cache})) << i;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (mpi_rank() == 0) write_header(include_dir, 7);
    MPI_Barrier(MPI_COMM_WORLD);
    // With the header as rank 3 compiled it, every rank finds its code.
    const auto found = find_cached(jobs[3].program, CodeType::cubin, {}, {.cache = &cache});
    EXPECT_TRUE(found);
    if (found) EXPECT_EQ(*found, codes[3]);
    MPI_Barrier(MPI_COMM_WORLD);  // before rank 0 removes the shared directory
}

TEST_F(MpiTest, CodeItsOwnerCouldNotCacheIsNotStoredByTheOthers) {
    SharedDir shared;
    auto jobs = jobs_of(4);
    // Job 1 (rank 1's) asks for a time trace of its own: compile_cached compiles it but cannot
    // key it by its headers, so rank 1's cache does not keep it.
    ProgramOptions options = jobs[1].program.options();
    options.fdevice_time_trace = (shared.path / "trace").string();
    jobs[1].program = Program(source_of(1), SourceType::cxx, options);
    const WarningHandler previous = set_warning_handler([](const Warning&) {});

    cudacore::test::TempDir temp;  // one per rank
    DiskProgramCache cache(temp.path() / "cache");
    const auto codes = mpi::compile_distributed(MPI_COMM_WORLD, jobs, CodeType::cubin,
                                                {.cache = &cache}, {.cache_received = true});
    set_warning_handler(previous);
    ASSERT_EQ(codes.size(), jobs.size());
    EXPECT_EQ(cache.stats().entries, 1u * 3u);
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        EXPECT_EQ(find_cached(jobs[i].program, CodeType::cubin, jobs[i].name_expressions, {.cache = &cache}).has_value(), i != 1)
            << i;
    }
    MPI_Barrier(MPI_COMM_WORLD);  // before rank 0 removes the shared directory
}

}  // namespace
