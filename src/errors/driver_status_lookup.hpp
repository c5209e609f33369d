// How driver_status_name and driver_status_text (cudacore/errors.hpp) ask the loaded driver for a
// status it knows and this library does not (cuGetErrorName, cuGetErrorString): through a lookup
// the loader gives once it has opened the driver (loader/driver_api.cpp). Before, or where no
// driver opens, there is none and they answer without it. Internal.
#pragma once

#include <cuda.h>

namespace cudacore::detail {

// The driver's name (text: false) or text (true) of `status`, or nullptr when it has none.
using DriverStatusLookup = const char* (*)(CUresult status, bool text) noexcept;

// Sets the lookup (release); later calls of driver_status_name and driver_status_text use it.
void set_driver_status_lookup(DriverStatusLookup lookup) noexcept;

}  // namespace cudacore::detail
