// Green contexts and tensor maps with no driver: options that pass every host-side check reach
// the driver and fail with NoDriverError (so the checks come first and need no driver).
#include "device_accessible_host_resource.hpp"
#include "empty_stream.hpp"
#include "expect_no_driver.hpp"

#include "cudacore/device.hpp"
#include "cudacore/green_context.hpp"
#include "cudacore/tensor_map.hpp"

#include <memory>

int main() {
    const auto probe = cudacore::test::expect_no_driver;
    using namespace cudacore;
    probe("sm_resource", [] { sm_resource(Device(0)); });
    // A resource as the driver would describe a 132-SM device.
    auto data = std::make_shared<CUdevResource>();
    data->type = CU_DEV_RESOURCE_TYPE_SM;
    data->sm.smCount = 132;
    data->sm.minSmPartitionSize = 8;
    data->sm.smCoscheduledAlignment = 8;
    const SmResource device_sms(data, 0, false);
    probe("SmResource::split", [&] { device_sms.split({.count = 2, .min_sm_count = 64}); });
    probe("GreenContext::create", [&] { GreenContext::create(device_sms); });

    const Stream no_stream = test::no_stream();
    auto resource = std::make_shared<test::DeviceAccessibleHostResource>();
    Buffer buffer = resource->allocate(64 * 64 * sizeof(float), no_stream);
    probe("TensorMap::tiled", [&] {
        TensorMap::tiled(buffer, {.element_type = TensorDataType::float32,
                                  .shape = {64, 64},
                                  .box = {32, 16},
                                  .swizzle = TensorMapSwizzle::bytes128});
    });
    probe("TensorMap::tiled rank 1", [&] {
        TensorMap::tiled(buffer, {.element_type = TensorDataType::float32,
                                  .shape = {1024},
                                  .box = {128}});
    });
    probe("TensorMap::tiled rank 5", [&] {
        TensorMap::tiled(buffer, {.element_type = TensorDataType::float32,
                                  .shape = {8, 4, 4, 2, 2},
                                  .box = {4, 2, 2, 2, 2}});
    });
    probe("TensorMap::im2col", [&] {
        TensorMap::im2col(buffer, {.element_type = TensorDataType::float32,
                                   .shape = {16, 16, 16},
                                   .lower_corner = {0},
                                   .upper_corner = {-1},
                                   .channels_per_pixel = 16,
                                   .pixels_per_column = 8});
    });
    return 0;
}
