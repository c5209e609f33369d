#include "cudacore/dlpack.hpp"

#include "cudacore/errors.hpp"
#include "memory/buffer_box.hpp"
#include "views/object_descriptions.hpp"

#include <limits>
#include <string>

namespace cudacore {

namespace {

using detail::describe_dtype;

std::size_t element_bytes(const DLDataType& dtype, const char* operation) {
    if (dtype.bits == 0 || dtype.bits % 8 != 0 || dtype.lanes == 0)
        throw InvalidArgumentError(std::string(operation) + ": " + describe_dtype(dtype) +
                                   " is not a whole number of bytes per element");
    return std::size_t{dtype.bits} / 8 * dtype.lanes;
}

// Extent in elements from the first one; 0 for an empty tensor.
std::size_t extent_elements(const std::int64_t* shape, const std::int64_t* strides, int ndim,
                            const char* operation) {
    if (ndim < 0)
        throw InvalidArgumentError(std::string(operation) + ": negative ndim " + std::to_string(ndim));
    if (ndim > 0 && !shape)
        throw InvalidArgumentError(std::string(operation) + ": null shape for " +
                                   std::to_string(ndim) + " dimensions");
    std::size_t last = 0;
    std::size_t compact = 1;  // row-major stride of dimension i, built from the back
    for (int i = ndim - 1; i >= 0; --i) {
        const std::int64_t extent = shape[i];
        if (extent < 0)
            throw InvalidArgumentError(std::string(operation) + ": dimension " + std::to_string(i) +
                                       " is negative (" + std::to_string(extent) + ")");
        if (extent == 0) return 0;
        const std::int64_t stride = strides ? strides[i] : static_cast<std::int64_t>(compact);
        if (stride < 0)
            throw InvalidArgumentError(std::string(operation) + ": stride " + std::to_string(stride) +
                                       " of dimension " + std::to_string(i) +
                                       " is negative (a Buffer covers memory upwards)");
        last += static_cast<std::size_t>(extent - 1) * static_cast<std::size_t>(stride);
        compact *= static_cast<std::size_t>(extent);
    }
    return last + 1;
}

DLDevice device_of(const Buffer& buffer) {
    const bool device = buffer.is_device_accessible();
    const bool host = buffer.is_host_accessible();
    if (device && host) {
        if (buffer.is_managed()) return {kDLCUDAManaged, 0};
        return {kDLCUDAHost, 0};
    }
    if (device) return {kDLCUDA, buffer.device_ordinal()};
    return {kDLCPU, 0};
}

struct ExportContext {
    Buffer buffer;
    std::vector<std::int64_t> shape;
    std::vector<std::int64_t> strides;
    DLManagedTensor tensor{};
};

// Owns an imported tensor: calls its deleter once, at close() or when the last buffer goes.
class DLPackImport final : public MemoryResource {
public:
    explicit DLPackImport(DLManagedTensor* tensor) : tensor_(tensor) {}
    ~DLPackImport() override { release(); }

    bool is_device_accessible() const noexcept override {
        return type() != kDLCPU;
    }
    bool is_host_accessible() const noexcept override { return type() != kDLCUDA; }
    bool is_managed() const noexcept override { return type() == kDLCUDAManaged; }
    int device_ordinal() const noexcept override {
        return type() == kDLCUDA ? device_id_ : 0;
    }
    std::string description() const override {
        return "DLPack tensor of device type " + std::to_string(static_cast<int>(type_)) +
               " (device_id " + std::to_string(device_id_) + ")";
    }

protected:
    CUdeviceptr do_allocate(std::size_t size, CUstream) override {
        throw InvalidArgumentError("allocate: " + description() + " cannot allocate (" +
                                   std::to_string(size) + " bytes asked)");
    }
    void do_deallocate(CUdeviceptr, std::size_t, CUstream) override { release(); }

private:
    DLDeviceType type() const noexcept { return type_; }
    void release() noexcept {
        DLManagedTensor* tensor = tensor_;
        tensor_ = nullptr;
        if (tensor && tensor->deleter) tensor->deleter(tensor);
    }

    DLManagedTensor* tensor_;
    DLDeviceType type_ = tensor_->dl_tensor.device.device_type;
    int device_id_ = tensor_->dl_tensor.device.device_id;
};

}  // namespace

std::size_t dlpack_extent_bytes(const DLTensor& tensor) {
    const std::size_t element = element_bytes(tensor.dtype, "dlpack");
    return extent_elements(tensor.shape, tensor.strides, tensor.ndim, "dlpack") * element;
}

DLManagedTensor* to_dlpack(const Buffer& buffer, const DLPackLayout& layout) {
    if (buffer.is_closed())
        throw InvalidArgumentError("to_dlpack: " + buffer.description() + " is closed");
    if (!layout.strides.empty() && layout.strides.size() != layout.shape.size())
        throw InvalidArgumentError("to_dlpack: " + std::to_string(layout.strides.size()) +
                                   " strides for " + std::to_string(layout.shape.size()) +
                                   " dimensions of " + buffer.description());
    if (layout.shape.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
        throw InvalidArgumentError("to_dlpack: too many dimensions");
    const std::size_t element = element_bytes(layout.dtype, "to_dlpack");
    const std::size_t elements =
        extent_elements(layout.shape.data(), layout.strides.empty() ? nullptr : layout.strides.data(),
                        static_cast<int>(layout.shape.size()), "to_dlpack");
    const std::size_t needed = layout.byte_offset + elements * element;
    if (needed > buffer.size())
        throw InvalidArgumentError("to_dlpack: the layout spans " + std::to_string(needed) +
                                   " bytes (byte_offset " + std::to_string(layout.byte_offset) +
                                   ", " + describe_dtype(layout.dtype) + "), more than " +
                                   buffer.description());
    auto context = std::make_unique<ExportContext>();
    context->buffer = buffer;
    context->shape = layout.shape;
    context->strides = layout.strides;
    DLTensor& tensor = context->tensor.dl_tensor;
    tensor.data = buffer.data();
    tensor.device = device_of(buffer);
    tensor.ndim = static_cast<std::int32_t>(context->shape.size());
    tensor.dtype = layout.dtype;
    tensor.shape = context->shape.empty() ? nullptr : context->shape.data();
    tensor.strides = context->strides.empty() ? nullptr : context->strides.data();
    tensor.byte_offset = layout.byte_offset;
    context->tensor.manager_ctx = context.get();
    context->tensor.deleter = [](DLManagedTensor* self) {
        delete static_cast<ExportContext*>(self->manager_ctx);
    };
    return &context.release()->tensor;
}

Buffer from_dlpack(DLManagedTensor* managed) {
    if (!managed) throw InvalidArgumentError("from_dlpack: null tensor");
    const DLTensor& tensor = managed->dl_tensor;
    switch (tensor.device.device_type) {
        case kDLCPU:
        case kDLCUDA:
        case kDLCUDAHost:
        case kDLCUDAManaged: break;
        default:
            throw InvalidArgumentError("from_dlpack: device type " +
                                       std::to_string(static_cast<int>(tensor.device.device_type)) +
                                       " is not CPU or CUDA memory");
    }
    if (!tensor.data) throw InvalidArgumentError("from_dlpack: null data");
    const std::size_t bytes = dlpack_extent_bytes(tensor);
    if (bytes == 0)
        throw InvalidArgumentError("from_dlpack: the tensor is empty (a Buffer has at least one byte)");
    auto resource = std::make_shared<DLPackImport>(managed);
    detail::BufferBoxPtr box;
    box->handle = reinterpret_cast<CUdeviceptr>(tensor.data) + tensor.byte_offset;
    box->size = bytes;
    box->device_ordinal = resource->device_ordinal();
    box->device_accessible = resource->is_device_accessible();
    box->host_accessible = resource->is_host_accessible();
    box->resource = std::move(resource);
    return detail::make_buffer(box);
}

}  // namespace cudacore
