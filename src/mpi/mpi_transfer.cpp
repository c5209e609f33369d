// pack / unpack, and the broadcast and all-gather collectives on ObjectCode.
#include "cudacore/mpi_transfer.hpp"

#include "mpi/mpi_support.hpp"

#include "code/serialized_parts.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <new>

namespace cudacore::mpi {

MpiError::MpiError(std::string call, int code, std::string object)
    : Error([&] {
          char text[MPI_MAX_ERROR_STRING] = {};
          int length = 0;
          if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) length = 0;
          return call + " failed (MPI error " + std::to_string(code) + ": " +
                 std::string(text, static_cast<std::size_t>(length)) + ") for " + object;
      }()),
      call_(std::move(call)),
      code_(code) {}

namespace {

using detail::Failure;

constexpr std::string_view message_magic{"CCMPI\0\0\1", 8};
constexpr std::string_view frame_magic{"CCMPIBC\1", 8};  // broadcast() frame

// The header every rank learns before the bytes: their length, and whether the root failed to
// produce them (then every rank goes to the agreement and throws).
struct Header {
    std::uint64_t length = 0;
    std::uint64_t root_failed = 0;
};

// Takes part in a broadcast of `size` bytes without keeping them (a rank that could not make
// room for them), so that no rank is left waiting.
void discard_broadcast(std::uint64_t size, int root, MPI_Comm comm, std::size_t chunk_bytes) {
    std::string scratch(static_cast<std::size_t>(std::min<std::uint64_t>(size, chunk_bytes)), '\0');
    for (std::uint64_t offset = 0; offset < size; offset += chunk_bytes) {
        const auto piece = static_cast<std::size_t>(std::min<std::uint64_t>(chunk_bytes, size - offset));
        detail::broadcast_chunks(scratch.data(), piece, root, comm, chunk_bytes);
    }
}

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
        discard_broadcast(header.length, root, comm, options.chunk_bytes);
    }
    return failure;
}

// Pieces of a code's bytes: small enough to stay in cache between arriving and being
// checksummed, large enough that each piece's collective costs little (measured with
// bench/mpi_compile.sh: 128 KiB pieces cost 20% more time than 1 MiB ones).
constexpr std::size_t piece_bytes = std::size_t{1} << 20;

// The root's codes, produced there by `produce`, on every rank. The code bytes are sent from
// where they lie and received into the buffers the new ObjectCodes keep (no copy either side,
// and no pass writing the buffers before the bytes arrive), and every rank checksums them piece by piece as they pass (the root what it sends, a receiver
// what it received), so that the checksum is neither a pass before the send nor one after:
//   1. three u64: preamble length, code count, whether the root failed;
//   2. the preamble: the code lengths (count u64, host order: they only size the receive
//      buffers), then the frame: magic, count, each code's serialized head (u64-prefixed);
//   3. each code's bytes, in pieces;
//   4. the checksums (8 bytes each, the serialized tails), which the root has once it sent all.
// Receivers rebuild each code from head, bytes and tail, checking the checksum and every field
// (detail::deserialize_checksummed_parts).
// One broadcast of codes: what the root sends and each receiver keeps.
struct CodeBroadcast {
    std::vector<ObjectCode> codes;
    std::vector<std::string> heads;  // each code's serialized head
    // Each rank's running checksum of head and bytes, code by code.
    std::vector<std::unique_ptr<cudacore::detail::SerializedChecksum>> checksums;
    std::string preamble;  // the lengths, then the frame
    std::string tails;     // the root's checksums, 8 bytes per code
    std::vector<cudacore::detail::CodeBytes> received;  // a receiver's code bytes
};

// On the root: the heads of `b.codes`, their checksums begun, and the preamble.
void frame_root_codes(CodeBroadcast& b) {
    std::vector<std::uint64_t> lengths;
    for (const auto& code : b.codes) {
        lengths.push_back(code.size());
        b.heads.push_back(cudacore::detail::serialized_head(code));
        b.checksums.push_back(std::make_unique<cudacore::detail::SerializedChecksum>());
        b.checksums.back()->update(b.heads.back());
    }
    detail::WireWriter out;
    out.raw({reinterpret_cast<const char*>(lengths.data()), lengths.size() * sizeof(std::uint64_t)});
    out.raw(frame_magic);
    out.u64(b.codes.size());
    for (const auto& head : b.heads) out.string(head);
    b.preamble = std::move(out.bytes());
    b.tails.reserve(8 * b.codes.size());
}

// On the root: each code's bytes sent from where they lie, checksummed piece by piece.
void send_code_bytes(CodeBroadcast& b, int root, MPI_Comm comm, std::size_t piece) {
    for (std::size_t i = 0; i < b.codes.size(); ++i) {
        // MPI_Ibcast only reads the root's buffer.
        char* bytes = const_cast<char*>(b.codes[i].code().data());
        cudacore::detail::SerializedChecksum& checksum = *b.checksums[i];
        detail::broadcast_pieces(
            b.codes[i].size(), root, comm, piece, [&](std::uint64_t offset, std::size_t) { return bytes + offset; },
            [&](const char* data, std::size_t length) { checksum.update({data, length}); });
        b.tails += cudacore::detail::checksum_bytes(checksum.digest());  // reserved: cannot throw
    }
}

// On a receiver: each code's bytes received into the room its ObjectCode keeps, checksummed as
// they arrive. After a failure it takes part in every piece without keeping them, so that no
// rank is left waiting. Returns the first failure.
std::optional<Failure> receive_code_bytes(CodeBroadcast& b, const std::vector<std::uint64_t>& lengths,
                                          std::optional<Failure> failure, int root, MPI_Comm comm,
                                          std::size_t piece, const char* operation) {
    const auto& filter = detail::receive_filter();
    for (std::size_t i = 0; i < lengths.size(); ++i) {
        if (!failure) {
            failure = detail::attempt([&] {
                if (lengths[i] > ObjectCode::max_serialized_size) {
                    throw SerializationError(std::string(operation) + ": code " + std::to_string(i) + " of " +
                                             std::to_string(lengths[i]) + " bytes exceeds the limit of " +
                                             std::to_string(ObjectCode::max_serialized_size));
                }
                // Room the bytes are received into and that the new ObjectCode keeps, not
                // written before (zeros would cost a pass over it).
                b.received.push_back(cudacore::detail::CodeBytes::room_for(static_cast<std::size_t>(lengths[i])));
                b.checksums.push_back(std::make_unique<cudacore::detail::SerializedChecksum>());
                b.checksums.back()->update(b.heads[i]);
            });
        }
        if (!failure) {
            char* bytes = b.received.back().data();
            cudacore::detail::SerializedChecksum& checksum = *b.checksums.back();
            detail::broadcast_pieces(
                lengths[i], root, comm, piece, [&](std::uint64_t offset, std::size_t) { return bytes + offset; },
                [&](const char* data, std::size_t length) {
                    if (!filter) checksum.update({data, length});
                });
        } else {
            std::string scratch(std::min<std::uint64_t>(lengths[i], piece), '\0');
            detail::broadcast_pieces(
                lengths[i], root, comm, piece, [&](std::uint64_t, std::size_t) { return scratch.data(); },
                [](const char*, std::size_t) {});
        }
    }
    return failure;
}

// On a receiver: the codes rebuilt from heads, bytes and the root's checksums (each checked).
void rebuild_received_codes(CodeBroadcast& b, std::size_t count, const char* operation) {
    if (const auto& filter = detail::receive_filter()) {
        for (std::size_t i = 0; i < count; ++i) {
            std::string bytes(b.received[i]);  // what the hook edits (tests only)
            filter(bytes, i + 1);
            b.checksums[i]->update(bytes);
            b.received[i] = cudacore::detail::CodeBytes(std::move(bytes));
        }
        filter(b.tails, count + 1);
    }
    if (b.tails.size() != count * 8) {
        throw SerializationError(std::string(operation) + ": " + std::to_string(b.tails.size()) +
                                 " bytes of checksums for " + std::to_string(count) + " codes");
    }
    for (std::size_t i = 0; i < count; ++i) {
        b.codes.push_back(cudacore::detail::deserialize_checksummed_parts(
            b.heads[i], std::move(b.received[i]), std::string_view(b.tails).substr(8 * i, 8),
            b.checksums[i]->digest()));
    }
}

// The root's numbers size the receivers' buffers (`receiver`: this rank is one): a count whose
// lengths a preamble of `preamble_size` bytes cannot hold, or buffers a rank cannot make, fail on
// every rank here, before any rank waits for bytes another one will not take.
void size_receivers(CodeBroadcast& b, std::uint64_t preamble_size, std::size_t count, bool receiver, MPI_Comm comm,
                    const char* operation) {
    std::optional<Failure> sized;
    if (receiver) {
        sized = detail::attempt([&] {
            if (count > preamble_size / sizeof(std::uint64_t)) {
                throw SerializationError(std::string(operation) + ": the lengths of " + std::to_string(count) +
                                         " codes cannot fit in a preamble of " + std::to_string(preamble_size) +
                                         " bytes");
            }
            b.preamble.resize(static_cast<std::size_t>(preamble_size));
            b.tails.resize(count * 8);
        });
    }
    detail::agree(comm, sized, operation);
}

// The root's codes, produced there by `produce`, on every rank. The code bytes are sent from
// where they lie and received into the buffers the new ObjectCodes keep (no copy either side,
// and no pass writing the buffers before the bytes arrive), and every rank checksums them piece
// by piece as they pass (the root what it sends, a receiver what it received), so that the
// checksum is neither a pass before the send nor one after:
//   1. three u64: preamble length, code count, whether the root failed;
//   2. the preamble: the code lengths (count u64, host order: they only size the receive
//      buffers), then the frame: magic, count, each code's serialized head (u64-prefixed);
//   3. each code's bytes, in pieces;
//   4. the checksums (8 bytes each, the serialized tails), which the root has once it sent all.
// Receivers rebuild each code from head, bytes and tail, checking the checksum and every field
// (detail::deserialize_checksummed_parts).
std::vector<ObjectCode> broadcast_codes(const std::function<std::vector<ObjectCode>()>& produce,
                                        int root, MPI_Comm comm, const TransferOptions& options,
                                        const char* operation) {
    detail::require_mpi(operation);
    const int rank = detail::rank_of(comm);
    detail::check_transfer_arguments(operation, root, detail::size_of(comm), options);
    const std::size_t chunk = options.chunk_bytes;
    const std::size_t piece = std::min(chunk, piece_bytes);

    CodeBroadcast b;
    std::optional<Failure> root_failure;
    if (rank == root) {
        root_failure = detail::attempt([&] {
            b.codes = produce();
            frame_root_codes(b);
        });
    }
    std::array<std::uint64_t, 3> header{b.preamble.size(), b.codes.size(), root_failure ? 1u : 0u};
    detail::check(MPI_Bcast(header.data(), 3, MPI_UINT64_T, root, comm), "MPI_Bcast",
                  std::string("the message header of ") + operation);
    if (header[2]) detail::agree(comm, root_failure, operation);  // throws on every rank

    const auto count = static_cast<std::size_t>(header[1]);
    size_receivers(b, header[0], count, rank != root, comm, operation);
    detail::broadcast_chunks(b.preamble.data(), b.preamble.size(), root, comm, chunk);
    std::vector<std::uint64_t> lengths(count);
    // An empty list has no lengths (and an empty vector's data() may be null, which memcpy
    // must not get).
    if (count != 0)
        std::memcpy(lengths.data(), b.preamble.data(), std::min(b.preamble.size(), count * sizeof(std::uint64_t)));
    std::string frame = b.preamble.substr(std::min(b.preamble.size(), count * sizeof(std::uint64_t)));

    std::optional<Failure> failure;
    if (rank == root) {
        send_code_bytes(b, root, comm, piece);
    } else {
        failure = detail::attempt([&] {
            if (const auto& filter = detail::receive_filter()) filter(frame, 0);
            b.heads = detail::read_broadcast_frame(frame, count, operation);
        });
        failure = receive_code_bytes(b, lengths, std::move(failure), root, comm, piece, operation);
    }

    detail::broadcast_chunks(b.tails.data(), b.tails.size(), root, comm, chunk);
    if (rank != root && !failure) failure = detail::attempt([&] { rebuild_received_codes(b, count, operation); });
    detail::agree(comm, failure, operation);
    return std::move(b.codes);
}

// Every rank's `message` (rank r's of lengths[r] bytes) into messages[r] (sized already; this
// rank's own left empty), in rounds of at most `chunk_bytes` in all (MPI's counts and
// displacements are int), each rank sending up to chunk_bytes / size per round.
void gather_in_rounds(const std::string& message, const std::vector<std::uint64_t>& lengths,
                      std::vector<std::string>& messages, int rank, std::size_t chunk_bytes, MPI_Comm comm,
                      const char* operation) {
    const int size = static_cast<int>(lengths.size());
    const std::uint64_t per_rank = std::max<std::uint64_t>(1, chunk_bytes / size);
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
}

}  // namespace

namespace detail {

std::vector<std::string> read_broadcast_frame(std::string_view frame, std::size_t count,
                                              const char* operation) {
    const std::string context(operation);
    WireReader in(frame, operation);
    if (in.raw(frame_magic.size(), "magic") != frame_magic)
        throw SerializationError(context + ": the message frame's magic does not match");
    const std::uint64_t listed = in.u64("code count");
    if (listed != count) {
        throw SerializationError(context + ": the frame lists " + std::to_string(listed) +
                                 " codes but " + std::to_string(count) + " were sent");
    }
    // Each head needs its length: a larger count cannot fit (and must not size a vector).
    if (count > in.remaining() / 8) {
        throw SerializationError(context + ": the frame lists " + std::to_string(count) +
                                 " codes but holds only " + std::to_string(in.remaining()) +
                                 " more bytes");
    }
    std::vector<std::string> heads;
    heads.reserve(count);
    for (std::size_t i = 0; i < count; ++i) heads.push_back(in.string("serialized head"));
    if (in.remaining() != 0) {
        throw SerializationError(context + ": " + std::to_string(in.remaining()) +
                                 " unexpected bytes after the frame");
    }
    return heads;
}

}  // namespace detail

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

    // Rank r's bytes go to messages[r].
    std::vector<std::string> messages(static_cast<std::size_t>(size));
    failure = detail::attempt([&] {
        for (int r = 0; r < size; ++r) {
            if (r != rank) messages[r].resize(static_cast<std::size_t>(lengths[r]));
        }
    });
    detail::agree(comm, failure, operation);
    gather_in_rounds(message, lengths, messages, rank, options.chunk_bytes, comm, operation);

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
