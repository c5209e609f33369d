// Part of a Buffer: a box of its own (address, size) that holds the owner's box.
#include "cudacore/buffer_slice.hpp"

#include "cudacore/errors.hpp"
#include "memory/buffer_box.hpp"
#include "support/box_access.hpp"

#include <atomic>
#include <string>

namespace cudacore {

namespace {

[[noreturn]] void throw_outside(const Buffer& buffer, std::size_t offset, std::size_t size) {
    const bool overflows = size > static_cast<std::size_t>(-1) - offset;
    throw InvalidArgumentError(
        "slice: bytes [" + std::to_string(offset) + ", " +
        (overflows ? std::string("overflow") : std::to_string(offset + size)) + ") are outside " +
        buffer.description() + " (offset " + std::to_string(offset) + " + size " +
        std::to_string(size) + " must be at most its size, " + std::to_string(buffer.size()) + ")");
}

}  // namespace

Buffer slice(const Buffer& buffer, std::size_t offset, std::size_t size) {
    detail::BufferBox* of = detail::box_of(buffer);
    if (!of || !of->is_open()) [[unlikely]]
        throw InvalidArgumentError("slice: " + buffer.description() +
                                   (of ? " is closed" : " has no memory (an empty Buffer)"));
    if (offset > of->size || size > of->size - offset) [[unlikely]]
        throw_outside(buffer, offset, size);
    detail::BufferBox* owner = of->parent ? of->parent : of;  // a slice of a slice: the owner
    detail::BufferBoxPtr box;
    box->owned = false;  // frees nothing: the owner does
    box->device_accessible = of->device_accessible;
    box->host_accessible = of->host_accessible;
    box->device_ordinal = of->device_ordinal;
    box->handle = of->handle + offset;
    box->size = size;
    box->resource = of->resource;  // for memory_resource() and descriptions; never asked to free
    owner->references.fetch_add(1, std::memory_order_relaxed);  // as a copy of the owner does
    box->parent = owner;
    return detail::make_buffer(box);
}

Buffer slice(const Buffer& buffer, std::size_t offset) {
    const std::size_t size = buffer.size();
    return slice(buffer, offset, offset <= size ? size - offset : 0);
}

std::optional<SliceOrigin> slice_origin(const Buffer& buffer) {
    const detail::BufferBox* box = detail::box_of(buffer);
    if (!box) return std::nullopt;
    if (!box->is_open())
        throw InvalidArgumentError("slice_origin: " + buffer.description() +
                                   " is closed (a closed slice no longer holds its owner)");
    if (!box->parent) return std::nullopt;
    box->parent->references.fetch_add(1, std::memory_order_relaxed);
    SliceOrigin origin;
    origin.owner = detail::BoxAccess::adopt<Buffer>(static_cast<detail::BufferBoxCount*>(box->parent));
    origin.offset = static_cast<std::size_t>(box->handle - box->parent->handle);
    return origin;
}

}  // namespace cudacore
