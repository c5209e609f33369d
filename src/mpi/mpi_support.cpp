#include "mpi/mpi_support.hpp"

#include "cudacore/compile_errors.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <utility>

namespace cudacore::mpi {

namespace detail {

void check(int code, const char* call, const std::string& object) {
    if (code != MPI_SUCCESS) throw MpiError(call, code, object);
}

void require_mpi(const char* function) {
    int initialized = 0;
    int finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (!initialized || finalized) {
        throw InvalidArgumentError(std::string(function) + ": MPI is " +
                                   (finalized ? "already finalized" : "not initialized") +
                                   " (call MPI_Init first; every cudacore::mpi function is collective)");
    }
}

int rank_of(MPI_Comm comm) {
    int rank = 0;
    check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank", "the communicator");
    return rank;
}

int size_of(MPI_Comm comm) {
    int size = 0;
    check(MPI_Comm_size(comm, &size), "MPI_Comm_size", "the communicator");
    return size;
}

void check_transfer_arguments(const char* function, int root, int size, const TransferOptions& options) {
    if (root < 0 || root >= size) {
        throw InvalidArgumentError(std::string(function) + ": root " + std::to_string(root) +
                                   " is not a rank of the communicator (size " + std::to_string(size) + ")");
    }
    if (options.chunk_bytes == 0 || options.chunk_bytes > static_cast<std::size_t>(INT_MAX)) {
        throw InvalidArgumentError(std::string(function) + ": TransferOptions::chunk_bytes is " +
                                   std::to_string(options.chunk_bytes) + ", it must be in 1 ..= INT_MAX");
    }
}

void broadcast_chunks(char* data, std::size_t size, int root, MPI_Comm comm, std::size_t chunk_bytes) {
    for (std::size_t offset = 0; offset < size; offset += chunk_bytes) {
        const std::size_t piece = std::min(chunk_bytes, size - offset);
        check(MPI_Bcast(data + offset, static_cast<int>(piece), MPI_BYTE, root, comm), "MPI_Bcast",
              std::to_string(piece) + " bytes at offset " + std::to_string(offset) + " of " +
                  std::to_string(size) + " from root " + std::to_string(root));
    }
}

void broadcast_pieces(std::uint64_t size, int root, MPI_Comm comm, std::size_t piece_bytes,
                      const std::function<char*(std::uint64_t offset, std::size_t length)>& place,
                      const std::function<void(const char* data, std::size_t length)>& arrived) {
    // The previous piece, complete, handled while the current one is posted: an MPI library that
    // progresses collectives in the background overlaps the two; one that does not (Open MPI's
    // shared-memory transport) still hands `arrived` a piece that is in cache.
    const char* previous = nullptr;
    std::size_t previous_length = 0;
    for (std::uint64_t offset = 0; offset < size; offset += piece_bytes) {
        const auto length = static_cast<std::size_t>(std::min<std::uint64_t>(piece_bytes, size - offset));
        char* data = place(offset, length);
        MPI_Request request = MPI_REQUEST_NULL;
        const auto object = [&] {
            return std::to_string(length) + " bytes at offset " + std::to_string(offset) + " of " +
                   std::to_string(size) + " from root " + std::to_string(root);
        };
        if (const int code = MPI_Ibcast(data, static_cast<int>(length), MPI_BYTE, root, comm, &request);
            code != MPI_SUCCESS) {
            throw MpiError("MPI_Ibcast", code, object());
        }
        if (previous) arrived(previous, previous_length);
        if (const int code = MPI_Wait(&request, MPI_STATUS_IGNORE); code != MPI_SUCCESS) {
            throw MpiError("MPI_Wait", code, object());
        }
        previous = data;
        previous_length = length;
    }
    if (previous) arrived(previous, previous_length);
}

std::string_view WireReader::raw(std::uint64_t size, const char* what) {
    if (size > remaining()) {
        throw SerializationError(std::string(context_) + ": " + what + " at offset " +
                                 std::to_string(position_) + " needs " + std::to_string(size) +
                                 " bytes but only " + std::to_string(remaining()) + " remain");
    }
    const std::string_view piece = bytes_.substr(position_, static_cast<std::size_t>(size));
    position_ += static_cast<std::size_t>(size);
    return piece;
}

std::uint64_t WireReader::little_endian(int size, const char* what) {
    const std::string_view piece = raw(static_cast<std::uint64_t>(size), what);
    std::uint64_t value = 0;
    for (int i = 0; i < size; ++i) value |= std::uint64_t{static_cast<unsigned char>(piece[i])} << (8 * i);
    return value;
}

namespace {

// What the other ranks rebuild a failure as.
enum class Kind : std::uint32_t { error = 0, compile = 1, serialization = 2, cache = 3, invalid_argument = 4 };

std::string encode_failure(const Failure& failure) {
    WireWriter out;
    try {
        std::rethrow_exception(failure.error);
    } catch (const CompileError& e) {
        out.u32(static_cast<std::uint32_t>(Kind::compile));
        out.string(e.what());
        out.string(e.program_name());
        out.string(e.log());
        out.u64(e.options().size());
        for (const auto& option : e.options()) out.string(option);
        out.string(failure.backend);
    } catch (const SerializationError& e) {
        out.u32(static_cast<std::uint32_t>(Kind::serialization));
        out.string(e.what());
    } catch (const CacheError& e) {
        out.u32(static_cast<std::uint32_t>(Kind::cache));
        out.string(e.what());
    } catch (const InvalidArgumentError& e) {
        out.u32(static_cast<std::uint32_t>(Kind::invalid_argument));
        out.string(e.what());
    } catch (const std::exception& e) {
        out.u32(static_cast<std::uint32_t>(Kind::error));
        out.string(e.what());
    } catch (...) {
        out.u32(static_cast<std::uint32_t>(Kind::error));
        out.string("an exception that is not a std::exception");
    }
    return std::move(out.bytes());
}

[[noreturn]] void throw_decoded(std::string_view encoded, int rank, const char* operation) {
    const std::string where = std::string(operation) + " failed on rank " + std::to_string(rank) + ": ";
    WireReader in(encoded, "cudacore::mpi failure report");
    const auto kind = static_cast<Kind>(in.u32("kind"));
    std::string what = in.string("message");
    switch (kind) {
        case Kind::compile: {
            std::string program_name = in.string("program name");
            std::string log = in.string("log");
            std::vector<std::string> options(in.u64("option count"));
            for (auto& option : options) option = in.string("option");
            std::string backend = in.string("backend");
            backend += (backend.empty() ? "" : ", ") + std::string("on rank ") + std::to_string(rank);
            throw CompileError(std::move(program_name), std::move(log), std::move(options),
                               std::move(backend));
        }
        case Kind::serialization: throw SerializationError(where + what);
        case Kind::cache: throw CacheError(where + what);
        case Kind::invalid_argument: throw InvalidArgumentError(where + what);
        case Kind::error: break;
    }
    throw Error(where + what);
}

}  // namespace

void agree(MPI_Comm comm, const std::optional<Failure>& failure, const char* operation) {
    struct {
        long order;
        int rank;
    } mine{LONG_MAX, rank_of(comm)}, winner{};
    if (failure) mine.order = std::min(failure->order, LONG_MAX - 1);
    check(MPI_Allreduce(&mine, &winner, 1, MPI_LONG_INT, MPI_MINLOC, comm), "MPI_Allreduce",
          std::string("the outcome of ") + operation);
    if (winner.order == LONG_MAX) return;

    std::string report;
    if (winner.rank == mine.rank) report = encode_failure(*failure);
    std::uint64_t size = report.size();
    check(MPI_Bcast(&size, 1, MPI_UINT64_T, winner.rank, comm), "MPI_Bcast",
          std::string("the failure report of ") + operation);
    report.resize(static_cast<std::size_t>(size));
    broadcast_chunks(report.data(), report.size(), winner.rank, comm, std::size_t{1} << 30);
    if (winner.rank == mine.rank) std::rethrow_exception(failure->error);
    throw_decoded(report, winner.rank, operation);
}

std::optional<Failure> attempt(const std::function<void()>& step, long order) {
    try {
        step();
        return std::nullopt;
    } catch (...) {
        return Failure{std::current_exception(), order, {}};
    }
}

namespace {
ReceiveFilter& filter_slot() {
    static ReceiveFilter filter;
    return filter;
}
}  // namespace

void set_receive_filter(ReceiveFilter filter) { filter_slot() = std::move(filter); }
const ReceiveFilter& receive_filter() { return filter_slot(); }

}  // namespace detail
}  // namespace cudacore::mpi
