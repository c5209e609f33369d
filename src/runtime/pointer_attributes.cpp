// pointer_attributes: every CU_POINTER_ATTRIBUTE_* cudacore reports, in one driver call.
#include "cudacore/pointer_attributes.hpp"

#include "loader/driver_api.hpp"

#include <cstdio>

namespace cudacore {

namespace {

// The attributes asked for, in the order of the values below. Not const: the driver's parameter
// is not (it only reads the list), and every call passes this one rather than a copy.
CUpointer_attribute attributes_asked[] = {
    CU_POINTER_ATTRIBUTE_MEMORY_TYPE,     CU_POINTER_ATTRIBUTE_IS_MANAGED,
    CU_POINTER_ATTRIBUTE_CONTEXT,         CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
    CU_POINTER_ATTRIBUTE_DEVICE_POINTER,  CU_POINTER_ATTRIBUTE_HOST_POINTER,
    CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE,
    CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE,  CU_POINTER_ATTRIBUTE_BUFFER_ID,
    CU_POINTER_ATTRIBUTE_MAPPED,          CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE,
};
constexpr unsigned kCount = sizeof attributes_asked / sizeof attributes_asked[0];

// Where the driver writes the answers that PointerAttributes does not hold as they are. Booleans
// are read as 32-bit words zeroed first: whichever width the driver writes, the word is non-zero
// exactly when the answer is true. The others go straight into PointerAttributes' own fields.
struct Flags {
    unsigned memory_type = 0;
    unsigned is_managed = 0;
    unsigned mapped = 0;
    unsigned legacy_ipc = 0;
};

std::string hex(unsigned long long value) {
    char text[32];
    std::snprintf(text, sizeof text, "0x%llx", value);
    return text;
}

// When the driver refuses the whole list (an attribute this driver or this kind of memory does
// not answer), each is asked alone and those it refuses stay empty; the memory type must answer.
void ask_one_by_one(const detail::DriverApi& api, CUresult status, CUpointer_attribute* asked,
                    void** values, CUdeviceptr pointer) {
    for (unsigned i = 0; i < kCount; ++i) {
        const CUresult one = api.cuPointerGetAttributes(1, &asked[i], &values[i], pointer);
        if (i == 0 && one != CUDA_SUCCESS)
            detail::check(status, "cuPointerGetAttributes",
                          [&] { return "pointer_attributes of " + hex(pointer); });
    }
}

// The driver answers DEVICE_POINTER for the context current on the calling thread: memory of a
// context, asked with none current (or one that cannot reach it), got 0. Asked again with the
// memory's own context current, and only then: the usual query stays one driver call.
void ask_device_pointer_in_own_context(const detail::DriverApi& api, CUdeviceptr pointer,
                                       PointerAttributes& out) noexcept {
    CUcontext current = nullptr;
    if (api.cuCtxGetCurrent(&current) != CUDA_SUCCESS || current == out.context) return;
    if (api.cuCtxPushCurrent(out.context) != CUDA_SUCCESS) return;
    CUdeviceptr device_pointer = 0;
    if (api.cuPointerGetAttribute(&device_pointer, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, pointer) ==
        CUDA_SUCCESS)
        out.device_pointer = device_pointer;
    CUcontext popped = nullptr;
    api.cuCtxPopCurrent(&popped);
}

}  // namespace

const char* to_string(MemoryType type) noexcept {
    switch (type) {
        case MemoryType::unregistered: return "unregistered";
        case MemoryType::host: return "host";
        case MemoryType::device: return "device";
        case MemoryType::managed: return "managed";
    }
    return "unknown";
}

PointerAttributes pointer_attributes(CUdeviceptr pointer) {
    PointerAttributes out;
    if (pointer == 0) return out;  // null: unregistered, without asking
    Flags flags;
    void* values[kCount] = {&flags.memory_type,  &flags.is_managed,  &out.context,
                            &out.device_ordinal, &out.device_pointer, &out.host_pointer,
                            &out.range_start,    &out.range_size,     &out.pool,
                            &out.buffer_id,      &flags.mapped,       &flags.legacy_ipc};
    CUpointer_attribute* asked = attributes_asked;
    const auto& api = detail::driver();
    const CUresult status = api.cuPointerGetAttributes(kCount, asked, values, pointer);
    if (status != CUDA_SUCCESS) [[unlikely]]
        ask_one_by_one(api, status, asked, values, pointer);
    if (flags.is_managed != 0) out.memory_type = MemoryType::managed;
    else if (flags.memory_type == CU_MEMORYTYPE_HOST) out.memory_type = MemoryType::host;
    else if (flags.memory_type == CU_MEMORYTYPE_DEVICE) out.memory_type = MemoryType::device;
    // Unknown: the driver's zeros mean nothing (ordinal 0), so every field is left empty. (Every
    // path returns `out`, so that it is built in the caller's place: no copy.)
    if (!out.is_known()) [[unlikely]] {
        out = PointerAttributes{};
        return out;
    }
    if (out.device_pointer == 0 && out.context) [[unlikely]]
        ask_device_pointer_in_own_context(api, pointer, out);
    out.is_managed = flags.is_managed != 0;
    out.is_mapped = flags.mapped != 0;
    out.is_legacy_ipc_capable = flags.legacy_ipc != 0;
    return out;
}

PointerAttributes pointer_attributes(const void* pointer) {
    return pointer_attributes(reinterpret_cast<CUdeviceptr>(pointer));
}

std::string PointerAttributes::description() const {
    if (!is_known()) return "unregistered memory (unknown to the driver)";
    std::string out = std::string(to_string(memory_type)) + " memory";
    if (device_ordinal >= 0) out += " of device " + std::to_string(device_ordinal);
    out += ", range " + hex(range_start) + "+" + std::to_string(range_size);
    if (pool) out += ", pool " + hex(reinterpret_cast<unsigned long long>(pool));
    if (context) out += ", context " + hex(reinterpret_cast<unsigned long long>(context));
    if (is_mapped) out += ", mapped";
    return out;
}

}  // namespace cudacore
