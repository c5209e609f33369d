// What the cudacore::mpi sources share: MPI status checks, chunked transfers, little-endian
// framing, and the agreement that turns one rank's failure into an exception on every rank.
#pragma once

#include "cudacore/mpi_transfer.hpp"

#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudacore::mpi::detail {

// Throws MpiError naming `call`, MPI's text for `code` and `object` unless code is MPI_SUCCESS.
void check(int code, const char* call, const std::string& object);
// Throws InvalidArgumentError unless MPI is initialized and not finalized.
void require_mpi(const char* function);
int rank_of(MPI_Comm comm);
int size_of(MPI_Comm comm);
// Throws InvalidArgumentError (the same on every rank: it reads only the arguments) for a root
// outside the communicator or a chunk size outside 1 ..= INT_MAX.
void check_transfer_arguments(const char* function, int root, int size, const TransferOptions& options);

// MPI_Bcast of `size` bytes at `data` from `root`, in pieces of at most chunk_bytes.
void broadcast_chunks(char* data, std::size_t size, int root, MPI_Comm comm, std::size_t chunk_bytes);

// Broadcast of `size` bytes from `root` in pieces of at most `piece_bytes` (MPI_Ibcast each),
// for callers that handle each piece as it passes: `place(offset, length)` says where the piece
// at `offset` goes (on the root, where it lies), and `arrived(data, length)` is called on every
// piece in order once it is complete on this rank, while the next one is already posted (so it
// must not throw). Every rank makes the same calls with the same sizes, or the collectives do
// not match.
void broadcast_pieces(std::uint64_t size, int root, MPI_Comm comm, std::size_t piece_bytes,
                      const std::function<char*(std::uint64_t offset, std::size_t length)>& place,
                      const std::function<void(const char* data, std::size_t length)>& arrived);

// One rank's failure in a collective step. `order` ranks failures (lower wins, ties go to the
// lower rank) so that every run reports the same one, e.g. the index of the failing job.
struct Failure {
    std::exception_ptr error;
    long order = 0;
    // For a CompileError: the compiler that failed (CompileError keeps it only in its message).
    std::string backend;
};

// Collective: every rank learns whether any rank failed. When none did, returns. Otherwise the
// winning failure is broadcast and every rank throws: its owner rethrows its own exception, the
// others an exception of the same kind whose message names the failing rank and `operation`.
void agree(MPI_Comm comm, const std::optional<Failure>& failure, const char* operation);

// Runs `step` and returns its failure, if any.
std::optional<Failure> attempt(const std::function<void()>& step, long order = 0);

// Little-endian framing of pack() and of failures.
class WireWriter {
public:
    void u32(std::uint32_t value) { little_endian(value, 4); }
    void u64(std::uint64_t value) { little_endian(value, 8); }
    void raw(std::string_view bytes) { out_.append(bytes); }
    void string(std::string_view text) {
        u64(text.size());
        raw(text);
    }
    std::string& bytes() { return out_; }

private:
    void little_endian(std::uint64_t value, int size) {
        for (int i = 0; i < size; ++i) out_.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
    }
    std::string out_;
};

// Every read is checked against the end; a short read is a SerializationError naming `context`.
class WireReader {
public:
    WireReader(std::string_view bytes, const char* context) : bytes_(bytes), context_(context) {}
    std::uint32_t u32(const char* what) { return static_cast<std::uint32_t>(little_endian(4, what)); }
    std::uint64_t u64(const char* what) { return little_endian(8, what); }
    std::string_view raw(std::uint64_t size, const char* what);
    std::string string(const char* what) { return std::string(raw(u64(what), what)); }
    std::size_t remaining() const { return bytes_.size() - position_; }

private:
    std::uint64_t little_endian(int size, const char* what);
    std::string_view bytes_;
    const char* context_;
    std::size_t position_ = 0;
};

// The serialized heads of `count` codes in the frame of a broadcast of codes (a receiver's
// check of what the root sent: magic, count, heads, nothing after them). Throws
// SerializationError naming `operation` otherwise. Takes bytes only, so it is fuzzed
// (fuzz/mpi_message_fuzzer.cpp).
std::vector<std::string> read_broadcast_frame(std::string_view frame, std::size_t count,
                                              const char* operation);

// Test hook: when set, called on every non-root rank with what broadcast() received before it is
// checked: part 0 is the frame (the serialized heads), part i the bytes of code i - 1, part
// count + 1 the checksums (tests corrupt them to check the failure path). While it is set,
// receivers checksum each code after the hook has seen all of it, rather than piece by piece as
// it arrives, so that the checksum covers the bytes they keep.
using ReceiveFilter = std::function<void(std::string& bytes, std::size_t part)>;
void set_receive_filter(ReceiveFilter filter);
const ReceiveFilter& receive_filter();

}  // namespace cudacore::mpi::detail
