/// @file
/// MipmappedArray: a CUDA mipmapped array (cuda.core's MipmappedArray); level l is
/// max(1, size >> l) in each dimension.
///
///     MipmappedArray mip = MipmappedArray::create(device, {.format = ArrayFormat::float32,
///                                                          .width = 256, .height = 256}, 9);
///     copy_to_array(mip.level(3), host_level3.data(), host_level3.size() * 4, stream);
///     TextureObject tex = TextureObject::from_mipmapped_array(mip, {.normalized_coordinates = true,
///                                                            .mipmap_filter = TextureFilterMode::linear});
#pragma once

#include "cudacore/owning_handle.hpp"
#include "cudacore/cuda_array.hpp"

#include <cuda.h>

#include <memory>
#include <string>

namespace cudacore {

/// The number of levels of a full chain for `options` (down to 1 x 1 x 1). Throws as array_shape.
unsigned full_mipmap_levels(const ArrayOptions& options);

/// A CUDA mipmapped array, destroyed after its last copy, level view and texture. Thread-safe.
/// InvalidArgumentError for what the device cannot do (checked first), DriverError.
class MipmappedArray : public OwningHandle<MipmappedArray, detail::MipmappedArrayBox, CUmipmappedArray> {
public:
    /// A new mipmapped array of `levels` levels on `device`'s primary context, which it holds.
    static MipmappedArray create(const Device& device, const ArrayOptions& options,
                                 unsigned levels);
    /// As create(), in `context`, which it holds.
    static MipmappedArray create(const Context& context, const ArrayOptions& options,
                                 unsigned levels);

    /// Level `level` as a CudaArray that holds this mipmapped array (level < levels()).
    CudaArray level(unsigned level) const;

    /// The options of level 0 (channels resolved).
    const ArrayOptions& options() const noexcept;
    /// The number of levels.
    unsigned levels() const noexcept;
    /// The options of level `level` (sizes halved, never below 1).
    ArrayOptions level_options(unsigned level) const;
    /// The device's ordinal.
    int device_ordinal() const noexcept;
    /// "mipmapped 2D CUDA array float32 256 x 256, 9 levels on device 0".
    std::string description() const;

    /// Ends the mipmapped array for every holder. DriverError (closed all the same).
    void close();
};

}  // namespace cudacore
