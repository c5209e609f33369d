// pack / unpack, and the broadcast and all-gather collectives on ObjectCode.
#include "mpi/mpi_support.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <new>

namespace cudacore::mpi {
namespace {

using detail::Failure;

constexpr std::string_view message_magic{"CCMPI\0\0\1", 8};

// The header every rank learns before the bytes: their length, and whether the root failed to
// produce them (then every rank goes to the agreement and throws).
struct Header {
    std::uint64_t length = 0;
    std::uint64_t root_failed = 0;
};

// Broadcasts `bytes` from the root, or the root's failure. Returns this rank's own failure to
// receive (no memory for the message), after taking part in every chunk so no rank waits.
std::optional<Failure> broadcast_message(std::string& bytes, const std::optional<Failure>& root_failure,
                                         int root, MPI_Comm comm, const TransferOptions& options,
                                         const char* operation) {
    const int rank = detail::rank_of(comm);
    Header header{bytes.size(), root_failure ? 1u : 0u};
    detail::check(MPI_Bcast(&header, 2, MPI_UINT64_T, root, comm), "MPI_Bcast",
                  std::string("the message header of ") + operation);
    if (header.root_failed) detail::agree(comm, root_failure, operation);  // throws on every rank

    std::optional<Failure> failure;
    if (rank != root) {
        failure = detail::attempt([&] {
            if (header.length > bytes.max_size()) throw std::bad_alloc();
            bytes.resize(static_cast<std::size_t>(header.length));
        });
    }
    if (!failure) {
        detail::broadcast_chunks(bytes.data(), bytes.size(), root, comm, options.chunk_bytes);
    } else {
        // Take part in every chunk into a scratch piece, then report the failure.
        std::string scratch(std::min<std::uint64_t>(header.length, options.chunk_bytes), '\0');
        for (std::uint64_t offset = 0; offset < header.length; offset += options.chunk_bytes) {
            const auto piece = static_cast<std::size_t>(
                std::min<std::uint64_t>(options.chunk_bytes, header.length - offset));
            detail::broadcast_chunks(scratch.data(), piece, root, comm, options.chunk_bytes);
        }
    }
    return failure;
}

// The broadcast of pack(codes) produced on the root by `produce`, unpacked elsewhere.
std::vector<ObjectCode> broadcast_codes(const std::function<std::vector<ObjectCode>()>& produce,
                                        int root, MPI_Comm comm, const TransferOptions& options,
                                        const char* operation) {
    detail::require_mpi(operation);
    const int rank = detail::rank_of(comm);
    detail::check_transfer_arguments(operation, root, detail::size_of(comm), options);

    std::vector<ObjectCode> codes;
    std::string message;
    std::optional<Failure> root_failure;
    if (rank == root) {
        root_failure = detail::attempt([&] {
            codes = produce();
            message = pack(codes);
        });
    }
    std::optional<Failure> failure =
        broadcast_message(message, root_failure, root, comm, options, operation);
    if (rank != root && !failure) {
        failure = detail::attempt([&] {
            if (const auto& filter = detail::receive_filter()) filter(message);
            codes = unpack(message);
        });
    }
    detail::agree(comm, failure, operation);
    return codes;
}

}  // namespace

std::string pack(const std::vector<ObjectCode>& codes) {
    std::vector<std::string> serialized;
    serialized.reserve(codes.size());
    std::size_t total = message_magic.size() + 8 + 8 * codes.size();
    for (const auto& code : codes) {
        serialized.push_back(code.serialize());
        total += serialized.back().size();
    }
    detail::WireWriter out;
    out.bytes().reserve(total);
    out.raw(message_magic);
    out.u64(codes.size());
    for (const auto& bytes : serialized) out.u64(bytes.size());
    for (const auto& bytes : serialized) out.raw(bytes);
    return std::move(out.bytes());
}

std::vector<ObjectCode> unpack(std::string_view message) {
    constexpr const char* context = "cudacore::mpi::unpack";
    detail::WireReader in(message, context);
    if (in.raw(message_magic.size(), "magic") != message_magic) {
        throw SerializationError(std::string(context) + ": not a cudacore::mpi message (" +
                                 std::to_string(message.size()) + " bytes; the magic does not match)");
    }
    const std::uint64_t count = in.u64("code count");
    // Each code needs a length and at least one byte: a larger count is corruption.
    if (count > in.remaining() / 9) {
        throw SerializationError(std::string(context) + ": the message claims " + std::to_string(count) +
                                 " codes but holds only " + std::to_string(in.remaining()) + " more bytes");
    }
    std::vector<std::uint64_t> lengths(static_cast<std::size_t>(count));
    std::uint64_t sum = 0;
    for (auto& length : lengths) {
        length = in.u64("code length");
        if (length > in.remaining()) {
            throw SerializationError(std::string(context) + ": a code length of " + std::to_string(length) +
                                     " bytes exceeds the message");
        }
        sum += length;
    }
    if (sum != in.remaining()) {
        throw SerializationError(std::string(context) + ": the code lengths add up to " + std::to_string(sum) +
                                 " bytes but " + std::to_string(in.remaining()) + " follow");
    }
    std::vector<ObjectCode> codes;
    codes.reserve(lengths.size());
    for (const auto length : lengths) codes.push_back(ObjectCode::deserialize(in.raw(length, "code")));
    return codes;
}

void broadcast_bytes(std::string& bytes, int root, MPI_Comm comm, const TransferOptions& options) {
    constexpr const char* operation = "cudacore::mpi::broadcast_bytes";
    detail::require_mpi(operation);
    detail::check_transfer_arguments(operation, root, detail::size_of(comm), options);
    detail::agree(comm, broadcast_message(bytes, std::nullopt, root, comm, options, operation), operation);
}

ObjectCode broadcast(const std::optional<ObjectCode>& code, int root, MPI_Comm comm,
                     const TransferOptions& options) {
    constexpr const char* operation = "cudacore::mpi::broadcast";
    auto codes = broadcast_codes(
        [&] {
            if (!code) {
                throw InvalidArgumentError(std::string(operation) + ": the root (rank " + std::to_string(root) +
                                           ") passed no ObjectCode");
            }
            return std::vector<ObjectCode>{*code};
        },
        root, comm, options, operation);
    if (codes.size() != 1) {
        // Only a message that passed every check but holds another count gets here.
        throw SerializationError(std::string(operation) + ": expected one ObjectCode, the message holds " +
                                 std::to_string(codes.size()));
    }
    return codes.front();
}

std::vector<ObjectCode> broadcast(const std::vector<ObjectCode>& codes, int root, MPI_Comm comm,
                                  const TransferOptions& options) {
    return broadcast_codes([&] { return codes; }, root, comm, options, "cudacore::mpi::broadcast");
}

std::vector<std::vector<ObjectCode>> all_gather(const std::vector<ObjectCode>& codes, MPI_Comm comm,
                                                const TransferOptions& options) {
    constexpr const char* operation = "cudacore::mpi::all_gather";
    detail::require_mpi(operation);
    const int rank = detail::rank_of(comm);
    const int size = detail::size_of(comm);
    detail::check_transfer_arguments(operation, 0, size, options);

    std::string message;
    std::optional<Failure> failure = detail::attempt([&] { message = pack(codes); });
    // Every rank's length, or a failure flag: a rank that could not pack sends no bytes.
    const std::array<std::uint64_t, 2> mine{message.size(), failure ? 1u : 0u};
    std::vector<std::uint64_t> headers(2 * static_cast<std::size_t>(size));
    detail::check(MPI_Allgather(mine.data(), 2, MPI_UINT64_T, headers.data(), 2, MPI_UINT64_T, comm),
                  "MPI_Allgather", std::string("the message headers of ") + operation);
    std::vector<std::uint64_t> lengths(static_cast<std::size_t>(size));
    bool any_failed = false;
    for (int r = 0; r < size; ++r) {
        lengths[r] = headers[2 * r];
        any_failed = any_failed || headers[2 * r + 1] != 0;
    }
    if (any_failed) detail::agree(comm, failure, operation);  // throws on every rank

    // Rank r's bytes go to messages[r]; in rounds of at most chunk_bytes in all (MPI's counts and
    // displacements are int), each rank sending up to chunk_bytes / size per round.
    std::vector<std::string> messages(static_cast<std::size_t>(size));
    failure = detail::attempt([&] {
        for (int r = 0; r < size; ++r) {
            if (r != rank) messages[r].resize(static_cast<std::size_t>(lengths[r]));
        }
    });
    detail::agree(comm, failure, operation);
    const std::uint64_t per_rank = std::max<std::uint64_t>(1, options.chunk_bytes / size);
    const std::uint64_t longest = *std::max_element(lengths.begin(), lengths.end());
    std::vector<int> counts(size), displacements(size);
    std::string round;
    for (std::uint64_t offset = 0; offset < longest; offset += per_rank) {
        int sum = 0;
        for (int r = 0; r < size; ++r) {
            counts[r] = static_cast<int>(std::min(per_rank, lengths[r] - std::min(lengths[r], offset)));
            displacements[r] = sum;
            sum += counts[r];
        }
        round.resize(static_cast<std::size_t>(sum));
        detail::check(MPI_Allgatherv(message.data() + std::min<std::uint64_t>(offset, message.size()),
                                     counts[rank], MPI_BYTE, round.data(), counts.data(),
                                     displacements.data(), MPI_BYTE, comm),
                      "MPI_Allgatherv",
                      std::to_string(sum) + " bytes at offset " + std::to_string(offset) + " of " + operation);
        for (int r = 0; r < size; ++r) {
            if (r != rank && counts[r] > 0) {
                std::memcpy(messages[r].data() + offset, round.data() + displacements[r],
                            static_cast<std::size_t>(counts[r]));
            }
        }
    }

    std::vector<std::vector<ObjectCode>> result(static_cast<std::size_t>(size));
    failure = detail::attempt([&] {
        for (int r = 0; r < size; ++r) result[r] = r == rank ? codes : unpack(messages[r]);
    });
    detail::agree(comm, failure, operation);
    return result;
}

std::vector<ObjectCode> all_gather(const ObjectCode& code, MPI_Comm comm, const TransferOptions& options) {
    std::vector<std::vector<ObjectCode>> lists = all_gather(std::vector<ObjectCode>{code}, comm, options);
    std::vector<ObjectCode> result;
    result.reserve(lists.size());
    for (std::size_t r = 0; r < lists.size(); ++r) {
        if (lists[r].size() != 1) {
            throw SerializationError("cudacore::mpi::all_gather: rank " + std::to_string(r) + " sent " +
                                     std::to_string(lists[r].size()) + " ObjectCodes, expected one");
        }
        result.push_back(lists[r].front());
    }
    return result;
}

}  // namespace cudacore::mpi
