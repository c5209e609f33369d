// The checks of a texture over device memory against a device's limits (texture.cpp), apart from
// the driver: testable without a GPU.
#pragma once

#include "cudacore/device_properties.hpp"
#include "cudacore/texture.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace cudacore::detail {

// The bytes of one element a texture over memory reads: plain and packed formats only (others
// refused, naming `call`); `channels` resolved into `resolved_channels`.
std::size_t linear_element_size(const char* call, ArrayFormat format, unsigned channels,
                                unsigned& resolved_channels);

// The width of a linear texture of `layout` over `buffer_bytes` at `address`: checked for
// alignment to properties.texture_alignment, a width inside the buffer and at most
// `max_width` (cuDeviceGetTexture1DLinearMaxWidth; 0: not checked). InvalidArgumentError naming
// `call`, the field, the value and the limit otherwise.
std::size_t check_linear_layout(const char* call, const LinearTextureLayout& layout,
                                std::uintptr_t address, std::size_t buffer_bytes,
                                std::size_t element_size, const DeviceProperties& properties,
                                std::size_t max_width, const std::string& buffer_description);

// A pitched 2D texture of `layout` over `buffer_bytes` at `address`: alignment, pitch alignment,
// sizes within MAXIMUM_TEXTURE2D_LINEAR_WIDTH / _HEIGHT / _PITCH, the rows inside the buffer.
void check_pitch2d_layout(const char* call, const Pitch2DTextureLayout& layout,
                          std::uintptr_t address, std::size_t buffer_bytes,
                          std::size_t element_size, const DeviceProperties& properties,
                          const std::string& buffer_description);

}  // namespace cudacore::detail
