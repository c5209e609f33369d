/// @file
/// SurfaceObject: a surface object over a CUDA array made with surface_load_store, for kernels
/// that read and write it (cuda.core's SurfaceObject).
///
///     CudaArray image = CudaArray::create(device, {.format = ArrayFormat::float32, .width = 64,
///                                                  .height = 64, .surface_load_store = true});
///     SurfaceObject surface = SurfaceObject::from_array(image);
///     launch(stream, config, kernel, surface);  // __global__ void k(cudaSurfaceObject_t s)
#pragma once

#include "cudacore/owning_handle.hpp"
#include "cudacore/cuda_array.hpp"
#include "cudacore/launch.hpp"

#include <cuda.h>

#include <memory>
#include <string>

namespace cudacore {

/// A surface object over a CUDA array, holding it; copies share it, destroyed after the work
/// launched with it through launch(). Immutable: thread-safe.
class SurfaceObject : public OwningHandle<SurfaceObject, detail::SurfaceBox, CUsurfObject> {
public:
    /// A surface over `array`. InvalidArgumentError, DriverError, NoDriverError.
    static SurfaceObject from_array(const CudaArray& array);

    /// The array it writes.
    const CudaArray& array() const noexcept;
    /// "surface object 0x.. over 2D CUDA array float32 64 x 64 (surface load/store) on device 0".
    std::string description() const;

    /// Notes a launch with this surface on `stream`, so its release waits for it (launch() does).
    void note_launch(const Stream& stream) const;

    /// Ends it for every holder. DriverError (closed all the same).
    void close();
};

}  // namespace cudacore
