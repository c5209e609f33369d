// The IPC descriptors' readers (IpcPoolDescriptor, IpcBufferDescriptor, IpcEventDescriptor::
// from_bytes) on arbitrary bytes, as another process may send them: each must either return a
// descriptor whose to_bytes() is the input itself, or throw SerializationError; never crash or
// read out of bounds. Random bytes almost never carry a valid checksum, so inputs whose first
// byte is odd get a correct checksum written over their last 8 bytes first, to reach the payload
// behind it.
#include "cudacore/errors.hpp"
#include "cudacore/ipc_descriptor.hpp"

#include <xxhash.h>  // inlined (XXH_INLINE_ALL, from cudacore_internals)

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

namespace {

template <class Descriptor>
void check(const std::vector<std::byte>& bytes) {
    try {
        const Descriptor descriptor = Descriptor::from_bytes(bytes);
        if (descriptor.to_bytes() != bytes) std::abort();  // accepted input must round-trip
    } catch (const cudacore::SerializationError&) {
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    std::vector<std::byte> bytes(size - 1);
    for (std::size_t i = 1; i < size; ++i) bytes[i - 1] = static_cast<std::byte>(data[i]);
    if ((data[0] & 1) != 0 && bytes.size() >= 8) {
        std::uint64_t checksum = XXH3_64bits(bytes.data(), bytes.size() - 8);
        for (std::size_t i = 0; i < 8; ++i)
            bytes[bytes.size() - 8 + i] = static_cast<std::byte>(checksum >> (8 * i));
    }
    // Every reader sees every input: a reader must refuse another kind's descriptor.
    check<cudacore::IpcPoolDescriptor>(bytes);
    check<cudacore::IpcBufferDescriptor>(bytes);
    check<cudacore::IpcEventDescriptor>(bytes);
    return 0;
}
