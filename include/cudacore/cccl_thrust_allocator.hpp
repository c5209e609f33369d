/// @file
/// cudacore::cccl::thrust_allocator: Thrust's temporary storage from a cudacore memory resource
/// through cccl.hpp's resource_adaptor, in stream order (CCCL's headers needed, as for cccl.hpp).
#pragma once

#include "cudacore/cccl.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/stream.hpp"

#include <cstddef>
#include <string>
#include <utility>

namespace cudacore::cccl {

/// A Thrust allocator (thrust::cuda::par(alloc).on(stream)) taking temporary storage from an
/// adaptor, ordered on `stream`.
template <class Resource>
class thrust_allocator {
public:
    using value_type = char;  ///< Thrust allocates temporary storage in bytes
    /// Holds `adaptor` (and so its resource) and `stream`.
    thrust_allocator(resource_adaptor<Resource> adaptor, const Stream& stream)
        : adaptor_(std::move(adaptor)), stream_(stream) {}
    /// `bytes` of temporary storage, ordered on the stream; InvalidArgumentError for a negative
    /// count, and what the adaptor throws.
    char* allocate(std::ptrdiff_t bytes) {
        if (bytes < 0)
            throw InvalidArgumentError("cudacore::cccl::thrust_allocator::allocate: negative size " +
                                       std::to_string(bytes));
        return static_cast<char*>(adaptor_.allocate_async(static_cast<std::size_t>(bytes),
                                                          max_alignment, to_stream_ref(stream_)));
    }
    /// Gives temporary storage back, ordered on the stream.
    void deallocate(char* pointer, std::size_t bytes) {
        adaptor_.deallocate_async(pointer, bytes, max_alignment, to_stream_ref(stream_));
    }

private:
    resource_adaptor<Resource> adaptor_;
    Stream stream_;
};

}  // namespace cudacore::cccl
