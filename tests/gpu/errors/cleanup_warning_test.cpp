// Observable cleanup on a real GPU: a release the driver refuses (cuMemFreeAsync of an address
// the pool never gave out) reaches the warning handler from the Buffer's destructor; the
// destructor does not throw; and normal releases report nothing.
#include "test_support.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/device_memory_resource.hpp"
#include "cudacore/warnings.hpp"

#include <memory>
#include <optional>
#include <vector>

namespace {

using namespace cudacore;

// Allocates real device memory through a DeviceMemoryResource but frees a wrong address, so the
// driver itself refuses the free.
class MisfreeingResource final : public MemoryResource {
public:
    explicit MisfreeingResource(const Device& device)
        : inner_(std::make_shared<DeviceMemoryResource>(device)) {}
    bool is_device_accessible() const noexcept override { return true; }
    bool is_host_accessible() const noexcept override { return false; }
    int device_ordinal() const noexcept override { return inner_->device_ordinal(); }
    std::string description() const override { return "misfreeing resource"; }

protected:
    CUdeviceptr do_allocate(std::size_t size, CUstream stream) override {
        return inner_->allocate_pointer(size, stream);
    }
    void do_deallocate(CUdeviceptr pointer, std::size_t size, CUstream stream) override {
        inner_->deallocate_pointer(pointer + 1, size, stream);  // provoked: not an allocation
    }

private:
    std::shared_ptr<DeviceMemoryResource> inner_;
};

TEST(CleanupGpu, DriverRefusedReleaseReachesTheHandler) {
    CUDACORE_REQUIRE_GPU();
    const Device device(0);
    const Stream stream = device.create_stream();
    std::vector<Warning> seen;
    WarningHandler previous = set_warning_handler([&](const Warning& w) { seen.push_back(w); });
    {
        Buffer normal = device.allocate(256, stream);
    }
    stream.sync();
    EXPECT_TRUE(seen.empty()) << seen.front().message;
    {
        auto resource = std::make_shared<MisfreeingResource>(device);
        Buffer buffer = resource->allocate(256, stream);
    }  // must not throw
    stream.sync();
    set_warning_handler(previous);
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].kind, WarningKind::release_failed);
    EXPECT_NE(seen[0].message.find("cuMemFreeAsync"), std::string::npos) << seen[0].message;
}

}  // namespace
