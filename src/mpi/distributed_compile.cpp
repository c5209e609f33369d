// compile_distributed: each rank compiles its share of the jobs, then all ranks exchange them.
#include "mpi/mpi_support.hpp"
#include "mpi/node_pool.hpp"

#include "cache/cached_entry.hpp"
#include "cache/compile_many_outcomes.hpp"
#include "cudacore/cache_key.hpp"
#include "cudacore/cached_compile.hpp"

#include "support/parallel_steps.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <string_view>
#include <thread>

namespace cudacore::mpi {
namespace {

// Where the sender's cache holds one job's code, sent after the sender's codes so that receivers
// store it under the same keys (cache_received). An ObjectCode, since all_gather moves those:
// named placement_name, its bytes little-endian fields: placement_magic, a u32 (1: cached, 0:
// not), and when cached the code's key (32 bytes) and the serialized header-list entry (u64
// length, 0 when there is none).
constexpr std::string_view placement_name = "cudacore cache placement";
constexpr std::string_view placement_magic = "CCPLACE1";

ObjectCode encode_placement(const std::optional<cudacore::detail::CachedEntry>& entry) {
    detail::WireWriter out;
    out.raw(placement_magic);
    out.u32(entry ? 1 : 0);
    if (entry) {
        out.raw(std::string_view(reinterpret_cast<const char*>(entry->code_key.digest.data()),
                                 entry->code_key.digest.size()));
        out.string(entry->header_list ? entry->header_list->serialize() : std::string());
    }
    return ObjectCode::from_bytes(CodeType::object, std::move(out.bytes()), std::string(placement_name));
}

// Where this rank's cache holds `code`, just compiled or found for `job` by compile_cached, or
// nullopt when it holds no complete entry of exactly this code (not stored, the store failed,
// or another process replaced it since).
std::optional<cudacore::detail::CachedEntry> placement_of(ProgramCache& cache, const CompileJob& job,
                                                          const CacheKey& source_key,
                                                          const ObjectCode& code) {
    std::optional<cudacore::detail::CachedEntry> entry =
        cudacore::detail::find_cached_entry(cache, job.program, source_key);
    if (entry && entry->code != code) return std::nullopt;
    return entry;
}

struct Placement {
    CacheKey code_key;
    std::optional<ObjectCode> header_list;
};

// The inverse of encode_placement; throws SerializationError for anything else.
std::optional<Placement> decode_placement(const ObjectCode& message, const std::string& context) {
    constexpr const char* what = "a cache placement";
    if (message.name() != placement_name || message.code_type() != CodeType::object) {
        throw SerializationError(context + ": expected " + what + ", got '" + message.name() + "'");
    }
    detail::WireReader in(message.code(), context.c_str());
    if (in.raw(placement_magic.size(), what) != placement_magic) {
        throw SerializationError(context + ": " + what + " without its magic");
    }
    const std::uint32_t cached = in.u32(what);
    if (cached > 1) throw SerializationError(context + ": " + what + " with state " + std::to_string(cached));
    std::optional<Placement> placement;
    if (cached == 1) {
        placement.emplace();
        const std::string_view key = in.raw(placement->code_key.digest.size(), what);
        std::memcpy(placement->code_key.digest.data(), key.data(), key.size());
        const std::string_view list = in.raw(in.u64(what), what);
        if (!list.empty()) placement->header_list = ObjectCode::deserialize(list);
    }
    if (in.remaining() != 0) {
        throw SerializationError(context + ": " + std::to_string(in.remaining()) + " bytes after " + what);
    }
    return placement;
}

// Threads for this rank's compiles: the node's cores shared among its ranks, and no more than
// the CPUs this rank may run on. Collective (it counts the ranks of this node).
unsigned compile_workers(MPI_Comm comm, unsigned requested) {
    const NodeRank node = node_rank(comm);
    if (requested) return requested;
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const cpu_set_t allowed = detail::allowed_cpus();
    return std::max(1u, std::min(static_cast<unsigned>(std::max(1, CPU_COUNT(&allowed))),
                                 cores / static_cast<unsigned>(std::max(1, node.size))));
}

}  // namespace

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

    // This rank's share, in job order, compiled by `workers` threads or child processes (the
    // node's cores split among its ranks; with processes, the node's shares pooled on its first
    // rank). With automatic PCH the first compile runs alone, so that the rest use the PCH it
    // makes. A failure stops the handing out of further jobs; the jobs before it run to their
    // end, so the lowest failing index of the share wins. With cache_received, each code is
    // followed (after all of them) by where this rank's cache holds it, so that the other ranks
    // store it under the same keys.
    const bool send_placements = options.cache && options.cache_received;
    const bool pooled = options.strategy == CompileStrategy::processes;
    std::optional<detail::NodeComm> node;
    detail::NodePool pool;
    std::optional<detail::NodeWait> node_wait;
    if (pooled) {
        node.emplace(comm);
        pool = detail::pool_on_node(comm, *node);
        node_wait.emplace(*node, pool.leads);
    }
    const unsigned workers =
        !pooled ? compile_workers(comm, options.workers)
                : std::max(1u, options.workers ? options.workers * static_cast<unsigned>(pool.node_size)
                                               : static_cast<unsigned>(CPU_COUNT(&pool.cpus)));
    // Which rank compiles job i, and where job i sits in that rank's list of codes.
    std::vector<int> compiler(jobs.size());
    std::vector<std::size_t> slot(jobs.size());
    std::vector<std::size_t> owned(static_cast<std::size_t>(size));
    std::vector<std::size_t> share;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        const int owner = compile_owner(i, size);
        compiler[i] = pooled ? pool.compiler[static_cast<std::size_t>(owner)] : owner;
        slot[i] = owned[static_cast<std::size_t>(compiler[i])]++;
        if (compiler[i] == rank) share.push_back(i);
    }
    std::vector<std::optional<ObjectCode>> compiled(share.size());
    std::vector<std::optional<ObjectCode>> placed(share.size());
    std::vector<std::optional<detail::Failure>> failures(share.size());
    auto name_backend = [&](std::size_t k) {
        if (!failures[k]) return;
        try {
            failures[k]->backend = jobs[share[k]].program.backend();
        } catch (...) {
            // The backend only decorates the report.
        }
    };
    // Where this rank's cache holds the code compiled[k] (cache_received only).
    auto place = [&](std::size_t k) {
        const std::size_t i = share[k];
        placed[k] = encode_placement(placement_of(*options.cache, jobs[i], keys[i], *compiled[k]));
    };
    auto compile_step = [&](std::size_t k) {
        const std::size_t i = share[k];
        failures[k] = detail::attempt(
            [&] {
                CompileJob& job = jobs[i];
                compiled[k] = options.cache ? compile_cached(*options.cache, job.program, target, job.name_expressions)
                                            : job.program.compile(target, job.name_expressions);
                if (send_placements) place(k);
            },
            static_cast<long>(i));
        name_backend(k);
        return !failures[k];
    };
    if (options.strategy == CompileStrategy::processes) {
        // compile_many's pool: the first miss here (its PCH), the others in child processes.
        std::vector<Program*> programs;
        std::vector<const std::vector<std::string>*> names;
        for (std::size_t i : share) {
            programs.push_back(&jobs[i].program);
            names.push_back(&jobs[i].name_expressions);
        }
        std::vector<cudacore::detail::ManyOutcome> outcomes;
        const CompileManyOptions many{CompileStrategy::processes, workers, options.cache, true};
        failure = detail::attempt(
            [&] {
                outcomes = cudacore::detail::compile_many_outcomes(programs, target, names, many,
                                                                   &pool.cpus, operation);
            },
            share.empty() ? 0 : static_cast<long>(share.front()));
        for (std::size_t k = 0; k < outcomes.size() && !failure; ++k) {
            const std::size_t i = share[k];
            if (outcomes[k].failure) {
                failures[k] = detail::Failure{outcomes[k].failure, static_cast<long>(i), {}};
                name_backend(k);
                break;  // the lowest failing index of the share wins, as with threads
            }
            if (!outcomes[k].code) {  // not started: only after a failure, which comes first
                failures[k] = detail::Failure{
                    std::make_exception_ptr(Error(std::string(operation) + ": job " + std::to_string(i) +
                                                  " was not compiled")),
                    static_cast<long>(i), {}};
                break;
            }
            compiled[k] = std::move(outcomes[k].code);
            if (send_placements) failures[k] = detail::attempt([&] { place(k); }, static_cast<long>(i));
        }
        if (failure && !failures.empty()) failures.front() = std::move(failure);
        node_wait->done();  // the node's other ranks sleep until its first rank is through
    } else {
        std::size_t alone = 0;
        if (workers > 1 && share.size() > 1) {
            const Program& first = jobs[share.front()].program;
            if (first.source_type() == SourceType::cxx && uses_automatic_pch(first.options())) {
                alone = 1;
                compile_step(0);
            }
        }
        if (!failures.empty() && !(alone && failures.front()))
            cudacore::detail::run_steps(share.size() - alone, workers, [&](std::size_t k) { return compile_step(k + alone); });
    }
    failure.reset();
    for (auto& failed : failures) {
        if (failed) {
            failure = std::move(failed);
            break;
        }
    }
    std::vector<ObjectCode> mine;
    if (!failure) {
        mine.reserve(2 * share.size());
        for (auto& code : compiled) mine.push_back(std::move(*code));
        for (auto& placement : placed)
            if (placement) mine.push_back(std::move(*placement));
    }
    detail::agree(comm, failure, operation);

    std::vector<std::vector<ObjectCode>> shares = all_gather(mine, comm, options.transfer);
    std::vector<ObjectCode> result;
    result.reserve(jobs.size());
    // Rank `sender` sends one code per job it compiled, in job order, then, when it caches
    // received code, one placement per code.
    auto list_of = [&](int sender) -> const std::vector<ObjectCode>& {
        const std::size_t count = owned[static_cast<std::size_t>(sender)];
        const auto& list = shares[static_cast<std::size_t>(sender)];
        if (list.size() != count && list.size() != 2 * count) {
            throw SerializationError(std::string(operation) + ": rank " + std::to_string(sender) + " sent " +
                                     std::to_string(list.size()) + " codes for its share of " +
                                     std::to_string(count) + " jobs");
        }
        return list;
    };
    for (std::size_t i = 0; i < jobs.size(); ++i) result.push_back(list_of(compiler[i])[slot[i]]);

    if (send_placements) {
        // Stored as the sender's compile_cached stored it: the header list under the source key,
        // the code under the sender's code key (its header digests: a rank whose headers differ
        // misses). A job the sender could not cache is not stored.
        failure = detail::attempt([&] {
            for (std::size_t i = 0; i < jobs.size(); ++i) {
                const int sender = compiler[i];
                if (sender == rank) continue;
                const auto& list = list_of(sender);
                const std::size_t count = owned[static_cast<std::size_t>(sender)];
                if (list.size() == count) continue;  // the sender sent no placements
                const std::optional<Placement> placement = decode_placement(
                    list[count + slot[i]],
                    std::string(operation) + ": job " + std::to_string(i) + " from rank " +
                        std::to_string(sender));
                if (!placement) continue;
                options.cache->put(placement->code_key, result[i]);
                if (placement->header_list) options.cache->put(keys[i], *placement->header_list);
            }
        });
        detail::agree(comm, failure, operation);
    }
    return result;
}

}  // namespace cudacore::mpi
