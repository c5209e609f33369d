// compile_distributed: each rank compiles its share of the jobs, then all ranks exchange them.
#include "mpi/mpi_support.hpp"

#include "cudacore/cache_key.hpp"
#include "cudacore/cached_compile.hpp"

#include <array>
#include <cstring>

namespace cudacore::mpi {

int compile_owner(std::size_t index, int ranks) noexcept {
    return ranks <= 0 ? 0 : static_cast<int>(index % static_cast<std::size_t>(ranks));
}

std::vector<ObjectCode> compile_distributed(MPI_Comm comm, std::vector<CompileJob>& jobs, CodeType target,
                                            const DistributedCompileOptions& options) {
    constexpr const char* operation = "cudacore::mpi::compile_distributed";
    detail::require_mpi(operation);
    const int rank = detail::rank_of(comm);
    const int size = detail::size_of(comm);
    detail::check_transfer_arguments(operation, 0, size, options.transfer);

    // Every rank must hold the same jobs: compare the digest of all cache keys with rank 0's.
    std::vector<CacheKey> keys(jobs.size());
    std::array<std::uint8_t, 40> digest{};  // job count (8 bytes) + SHA-256 of the keys
    std::optional<detail::Failure> failure = detail::attempt([&] {
        std::string all_keys;
        for (std::size_t i = 0; i < jobs.size(); ++i) {
            keys[i] = cache_key(jobs[i].program, target, jobs[i].name_expressions);
            all_keys.append(reinterpret_cast<const char*>(keys[i].digest.data()), keys[i].digest.size());
        }
        const std::uint64_t count = jobs.size();
        std::memcpy(digest.data(), &count, 8);
        const CacheKey combined = CacheKey::of_bytes(all_keys);
        std::memcpy(digest.data() + 8, combined.digest.data(), 32);
    });
    detail::agree(comm, failure, operation);
    auto reference = digest;
    detail::check(MPI_Bcast(reference.data(), static_cast<int>(reference.size()), MPI_BYTE, 0, comm),
                  "MPI_Bcast", std::string("the job digest of ") + operation);
    if (reference != digest) {
        failure = detail::Failure{std::make_exception_ptr(InvalidArgumentError(
                                      std::string(operation) + ": rank " + std::to_string(rank) +
                                      " was given other jobs than rank 0 (" + std::to_string(jobs.size()) +
                                      " jobs; their sources, options, targets or name expressions differ)")),
                                  -1, {}};
    }
    detail::agree(comm, failure, operation);

    // This rank's share, in job order; the first failure stops it (the lowest failing index wins).
    std::vector<ObjectCode> mine;
    for (std::size_t i = static_cast<std::size_t>(rank); i < jobs.size(); i += static_cast<std::size_t>(size)) {
        failure = detail::attempt(
            [&] {
                CompileJob& job = jobs[i];
                mine.push_back(options.cache
                                   ? compile_cached(*options.cache, job.program, target, job.name_expressions)
                                   : job.program.compile(target, job.name_expressions));
            },
            static_cast<long>(i));
        if (failure) {
            try {
                failure->backend = jobs[i].program.backend();
            } catch (...) {
                // The backend only decorates the report.
            }
            break;
        }
    }
    detail::agree(comm, failure, operation);

    std::vector<std::vector<ObjectCode>> shares = all_gather(mine, comm, options.transfer);
    std::vector<ObjectCode> result;
    result.reserve(jobs.size());
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        const auto& share = shares[compile_owner(i, size)];
        const std::size_t position = i / static_cast<std::size_t>(size);
        if (position >= share.size()) {
            throw SerializationError(std::string(operation) + ": rank " + std::to_string(compile_owner(i, size)) +
                                     " sent " + std::to_string(share.size()) + " codes, fewer than its share");
        }
        result.push_back(share[position]);
    }

    if (options.cache && options.cache_received) {
        failure = detail::attempt([&] {
            for (std::size_t i = 0; i < jobs.size(); ++i) {
                if (compile_owner(i, size) != rank) options.cache->put(keys[i], result[i]);
            }
        });
        detail::agree(comm, failure, operation);
    }
    return result;
}

}  // namespace cudacore::mpi
