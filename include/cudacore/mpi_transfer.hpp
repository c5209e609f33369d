/// @file
/// cudacore::mpi, moving code between ranks: ObjectCode (and bytes) broadcast and gathered in
/// checked chunks. The contract every function keeps is at the top of mpi.hpp.
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
    /// Largest piece of one MPI call, in bytes (1 ..= INT_MAX).
    std::size_t chunk_bytes = std::size_t{1} << 30;
};

/// The message form of a list of ObjectCodes (a count, the lengths, each serialize()).
std::string pack(const std::vector<ObjectCode>& codes);
/// The inverse. SerializationError unless well-formed; never reads outside `message`.
std::vector<ObjectCode> unpack(std::string_view message);

/// Broadcasts bytes from `root` in chunks (replaced on the other ranks).
void broadcast_bytes(std::string& bytes, int root, MPI_Comm comm, const TransferOptions& options = {});

/// The root's code, on every rank (`code` ignored off the root; required on it).
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
