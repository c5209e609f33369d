/// @file
/// cudacore::mpi, moving code between ranks: ObjectCode (and plain bytes) broadcast to and
/// gathered from every rank of a communicator, in checked chunks. The contract every function
/// of cudacore::mpi keeps (MPI initialised, collective calls, agreed failures, how code travels)
/// is at the top of mpi.hpp.
#pragma once

#include "cudacore/errors.hpp"
#include "cudacore/object_code.hpp"

#include <mpi.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudacore::mpi {

/// An MPI call returned an error (only seen when the communicator's error handler returns).
class MpiError : public Error {
public:
    /// Makes the error from the MPI call, its error code and the object involved.
    MpiError(std::string call, int code, std::string object);
    /// The MPI function that failed ("MPI_Bcast").
    const std::string& call() const noexcept { return call_; }
    /// The error code it returned (MPI_ERR_...).
    int code() const noexcept { return code_; }

private:
    std::string call_;
    int code_;
};

/// Options of the functions that send ObjectCodes between ranks.
struct TransferOptions {
    /// Largest piece of one MPI call, in bytes (1 ..= INT_MAX). The default keeps every count
    /// well inside `int`; tests use tiny values to exercise the chunking.
    std::size_t chunk_bytes = std::size_t{1} << 30;
};

// ---- Code on the wire --------------------------------------------------------------------

/// The message form of a list of ObjectCodes: magic "CCMPI\0\0\1", a u64 count, count u64
/// lengths, then each code's serialize() bytes (little-endian, like the serialized form).
std::string pack(const std::vector<ObjectCode>& codes);
/// The inverse. Throws SerializationError for anything but a well-formed message whose every
/// ObjectCode passes its checksum; never reads outside `message`.
std::vector<ObjectCode> unpack(std::string_view message);

/// Broadcasts bytes from `root` in chunks. On the root `bytes` is sent; on the others it is
/// replaced by what was sent. Collective; throws MpiError, InvalidArgumentError (bad root or
/// options, agreed on every rank).
void broadcast_bytes(std::string& bytes, int root, MPI_Comm comm, const TransferOptions& options = {});

// ---- Collectives on ObjectCode -------------------------------------------------------------

/// The root's code, on every rank (the root gets its own back). `code` must hold a value on the
/// root and is ignored elsewhere (pass std::nullopt); a root without one makes every rank throw
/// InvalidArgumentError. A message that fails its checks is a SerializationError on every rank.
ObjectCode broadcast(const std::optional<ObjectCode>& code, int root, MPI_Comm comm,
                     const TransferOptions& options = {});
/// The same for a list (ignored on the other ranks; the root's list may be empty).
std::vector<ObjectCode> broadcast(const std::vector<ObjectCode>& codes, int root, MPI_Comm comm,
                                  const TransferOptions& options = {});

/// Every rank's code, in rank order, on every rank.
std::vector<ObjectCode> all_gather(const ObjectCode& code, MPI_Comm comm,
                                   const TransferOptions& options = {});
/// Every rank's list (lists may differ in length), indexed by rank, on every rank.
std::vector<std::vector<ObjectCode>> all_gather(const std::vector<ObjectCode>& codes, MPI_Comm comm,
                                                const TransferOptions& options = {});

}  // namespace cudacore::mpi
