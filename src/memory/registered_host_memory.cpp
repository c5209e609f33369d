#include "cudacore/registered_host_memory.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "memory/buffer_box.hpp"
#include "memory/free_after_stream.hpp"

#include <cstdio>

namespace cudacore {

namespace {

std::string describe_host(const void* pointer, std::size_t size) {
    char text[64];
    std::snprintf(text, sizeof text, "host memory %p of %zu bytes", pointer, size);
    return text;
}

// One per registration: unregisters instead of freeing.
class RegisteredHostMemory final : public MemoryResource {
public:
    RegisteredHostMemory(std::shared_ptr<detail::ContextBox> context, int ordinal, void* pointer,
                         std::size_t size)
        : context_(std::move(context)), ordinal_(ordinal), pointer_(pointer), size_(size) {}

    bool is_device_accessible() const noexcept override { return true; }
    bool is_host_accessible() const noexcept override { return true; }
    int device_ordinal() const noexcept override { return ordinal_; }
    std::string description() const override {
        return "registered " + describe_host(pointer_, size_) + " through device " +
               std::to_string(ordinal_);
    }

protected:
    CUdeviceptr do_allocate(std::size_t size, CUstream) override {
        throw InvalidArgumentError("allocate: " + description() + " cannot allocate (" +
                                   std::to_string(size) + " bytes asked); register memory instead");
    }
    void do_deallocate(CUdeviceptr pointer, std::size_t, CUstream stream) override {
        detail::free_after_stream(
            *context_, stream, "cuMemHostUnregister",
            [&](const detail::DriverApi& api) {
                return api.cuMemHostUnregister(reinterpret_cast<void*>(pointer));
            },
            [&] { return description(); });
    }

private:
    std::shared_ptr<detail::ContextBox> context_;
    int ordinal_;
    void* pointer_;
    std::size_t size_;
};

}  // namespace

Buffer register_host_memory(void* pointer, std::size_t size, const Device& device,
                            const HostRegisterOptions& options) {
    if (!pointer)
        throw InvalidArgumentError("register_host_memory: null pointer (" + std::to_string(size) +
                                   " bytes)");
    if (size == 0)
        throw InvalidArgumentError("register_host_memory: size 0 at " + describe_host(pointer, 0));
    if (options.read_only && device.attribute(CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED) == 0)
        throw InvalidArgumentError("register_host_memory: read_only asked, but device " +
                                   std::to_string(device.ordinal()) +
                                   " cannot register host memory read-only "
                                   "(CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED is 0)");
    auto context = detail::primary_context(device.ordinal());
    unsigned flags = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP;
    if (options.read_only) flags |= CU_MEMHOSTREGISTER_READ_ONLY;
    // The box first: if registration fails it goes away with nothing to unregister.
    detail::BufferBoxPtr box;
    box->size = size;
    box->device_ordinal = device.ordinal();
    box->device_accessible = true;
    box->host_accessible = true;
    {
        detail::ContextScope scope(*context);
        detail::check(detail::driver().cuMemHostRegister(pointer, size, flags), "cuMemHostRegister",
                      [&] {
                          return describe_host(pointer, size) + " through device " +
                                 std::to_string(device.ordinal()) +
                                 (options.read_only ? " (read-only)" : "");
                      });
    }
    // With unified addressing the host address is the device address too.
    box->handle = reinterpret_cast<CUdeviceptr>(pointer);
    box->resource = std::make_shared<RegisteredHostMemory>(context, device.ordinal(), pointer, size);
    // Tracked, so that the last copy going (or the exit handler) unregisters the memory.
    box->track();
    return detail::make_buffer(box);
}

}  // namespace cudacore
