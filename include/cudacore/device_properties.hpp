/// @file
/// DeviceProperties: every current driver device attribute as a named, typed member, read by
/// Device::properties() once per device. Names are the CU_DEVICE_ATTRIBUTE_ names without the
/// prefix, in lower case, deprecated aliases left out; one this driver lacks stays zero.
#pragma once

#include <string>

namespace cudacore {

/// One member per current CU_DEVICE_ATTRIBUTE_ (listed in device_property_list.inc).
struct DeviceProperties {
#ifndef CUDACORE_DOXYGEN  // the reference lists the attributes in device_property_list.inc
#define CUDACORE_DEVICE_PROPERTY(attribute, member, type) type member{};
#include "cudacore/device_property_list.inc"
#undef CUDACORE_DEVICE_PROPERTY
#endif

    bool operator==(const DeviceProperties&) const = default;  ///< equal when every field is
};

}  // namespace cudacore
