// The 12 attributes cudacore's pointer_attributes reads, as a raw user asks the driver for them
// in one cuPointerGetAttributes call: the raw side of the "attributes of an address" rows
// (side_by_side and overhead_split). cuPointerGetAttributes takes a non-const array.
#pragma once

#include <cuda.h>

namespace cudacore::bench {

inline CUpointer_attribute raw_pointer_attributes[] = {
    CU_POINTER_ATTRIBUTE_MEMORY_TYPE,      CU_POINTER_ATTRIBUTE_IS_MANAGED,
    CU_POINTER_ATTRIBUTE_CONTEXT,          CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
    CU_POINTER_ATTRIBUTE_DEVICE_POINTER,   CU_POINTER_ATTRIBUTE_HOST_POINTER,
    CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE,
    CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE,   CU_POINTER_ATTRIBUTE_BUFFER_ID,
    CU_POINTER_ATTRIBUTE_MAPPED,           CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE};
inline constexpr unsigned raw_pointer_attribute_count = sizeof raw_pointer_attributes / sizeof raw_pointer_attributes[0];

}  // namespace cudacore::bench
