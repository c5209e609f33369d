// The readers of what another MPI rank sends (cudacore::mpi) on arbitrary bytes: unpack() of an
// all_gather message, and a broadcast receiver's frame (detail::read_broadcast_frame) followed by
// the rebuild of each code from its head, bytes and checksum
// (deserialize_checksummed_parts). Each must either accept bytes that the sender's side would
// have written exactly so, or throw SerializationError; never crash or read out of bounds.
// The first byte chooses: even, unpack; odd, a broadcast with (byte / 2) % 8 codes, the frame
// being the bytes up to the first "|||" and the code bytes the rest; with bit 4 set the code
// gets a correct checksum, to reach the fields behind it.
#include "cudacore/errors.hpp"
#include "cudacore/mpi.hpp"
#include "code/serialized_parts.hpp"
#include "mpi/mpi_support.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace {

void check_unpack(std::string_view message) {
    try {
        const std::vector<cudacore::ObjectCode> codes = cudacore::mpi::unpack(message);
        if (cudacore::mpi::pack(codes) != message) std::abort();  // accepted must round-trip
    } catch (const cudacore::SerializationError&) {
    }
}

void check_broadcast(std::string_view input, std::size_t count, bool reseal) {
    const std::size_t split = input.find("|||");
    const std::string_view frame = input.substr(0, split);
    const std::string_view rest =
        split == std::string_view::npos ? std::string_view{} : input.substr(split + 3);
    std::vector<std::string> heads;
    try {
        heads = cudacore::mpi::detail::read_broadcast_frame(frame, count, "fuzzed broadcast");
    } catch (const cudacore::SerializationError&) {
        return;
    }
    if (heads.size() != count) std::abort();
    for (const std::string& head : heads) {
        // The code bytes and the tail as sent: the rest of the input, its last 8 bytes the tail.
        const std::size_t code_size = rest.size() >= 8 ? rest.size() - 8 : 0;
        const std::string code(rest.substr(0, code_size));
        cudacore::detail::SerializedChecksum checksum;
        checksum.update(head);
        checksum.update(code);
        const std::string tail = reseal ? cudacore::detail::checksum_bytes(checksum.digest())
                                        : std::string(rest.substr(code_size));
        try {
            const cudacore::ObjectCode rebuilt = cudacore::detail::deserialize_checksummed_parts(
                head, cudacore::detail::CodeBytes(code), tail, checksum.digest());
            if (rebuilt.serialize() != head + code + tail) std::abort();
        } catch (const cudacore::SerializationError&) {
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
    if ((data[0] & 1) == 0) check_unpack(bytes);
    else check_broadcast(bytes, (data[0] >> 1) % 8, (data[0] & 16) != 0);
    return 0;
}
