/// @file
/// DeviceProperties: every current driver device attribute as a named, typed member (bool for
/// yes/no flags), read by Device::properties() in one call and cached per device for the life of
/// the process (attributes of a device do not change while it runs).
///
/// Names are the CU_DEVICE_ATTRIBUTE_ names without the prefix, in lower case; deprecated aliases
/// are left out (use the current name: max_shared_memory_per_block, not shared_memory_per_block).
/// An attribute this driver does not know keeps its zero / false default. The name-keyed map of
/// Device::attributes() stays for tools.
#pragma once

#include <string>

namespace cudacore {

/// One member per current CU_DEVICE_ATTRIBUTE_ (device_property_list.inc lists them with what
/// the driver documents of each), as Device::properties() read them.
struct DeviceProperties {
#ifndef CUDACORE_DOXYGEN  // the reference lists the attributes in device_property_list.inc
#define CUDACORE_DEVICE_PROPERTY(attribute, member, type) type member{};
#include "cudacore/device_property_list.inc"
#undef CUDACORE_DEVICE_PROPERTY
#endif

    /// Equal when every field is.
    bool operator==(const DeviceProperties&) const = default;
};

}  // namespace cudacore
