// A MemoryResource over plain host memory (operator new), for testing Buffer's own logic with no
// driver: it counts allocations and frees, and can be told to fail when freeing.
#pragma once

#include "cudacore/memory_resource.hpp"

#include <atomic>
#include <new>
#include <stdexcept>
#include <string>

namespace cudacore::test {

class HostMemoryResource final : public MemoryResource {
public:
    explicit HostMemoryResource(bool host_accessible = true, int device_ordinal = 0)
        : host_accessible_(host_accessible), device_ordinal_(device_ordinal) {}

    bool is_device_accessible() const noexcept override { return false; }
    bool is_host_accessible() const noexcept override { return host_accessible_; }
    int device_ordinal() const noexcept override { return device_ordinal_; }
    std::string description() const override { return "test host memory"; }

    std::atomic<int> allocations{0};
    std::atomic<int> frees{0};
    std::atomic<CUstream> last_free_stream{nullptr};
    bool fail_to_free = false;

protected:
    CUdeviceptr do_allocate(std::size_t size, CUstream) override {
        ++allocations;
        return reinterpret_cast<CUdeviceptr>(::operator new(size));
    }
    void do_deallocate(CUdeviceptr pointer, std::size_t, CUstream stream) override {
        ++frees;
        last_free_stream = stream;
        ::operator delete(reinterpret_cast<void*>(pointer));
        if (fail_to_free) throw std::runtime_error("test resource: free failed on purpose");
    }

private:
    bool host_accessible_;
    int device_ordinal_;
};

}  // namespace cudacore::test
