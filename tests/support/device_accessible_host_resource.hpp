// A MemoryResource over 128-byte aligned host memory that claims to be device-accessible, so the
// checks that want device memory (tensor maps) can be exercised with no driver and no GPU.
#pragma once

#include "cudacore/memory_resource.hpp"

#include <new>
#include <string>

namespace cudacore::test {

class DeviceAccessibleHostResource final : public MemoryResource {
public:
    bool is_device_accessible() const noexcept override { return true; }
    bool is_host_accessible() const noexcept override { return true; }
    int device_ordinal() const noexcept override { return 0; }
    std::string description() const override { return "test device-accessible host memory"; }

protected:
    CUdeviceptr do_allocate(std::size_t size, CUstream) override {
        return reinterpret_cast<CUdeviceptr>(::operator new(size, std::align_val_t{128}));
    }
    void do_deallocate(CUdeviceptr pointer, std::size_t, CUstream) override {
        ::operator delete(reinterpret_cast<void*>(pointer), std::align_val_t{128});
    }
};

}  // namespace cudacore::test
