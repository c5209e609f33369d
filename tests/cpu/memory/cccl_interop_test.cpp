// CCCL interop that needs no GPU: every cudacore resource adaptor satisfies the cuda::mr
// concepts with exactly the properties of its memory, and the stream conversions compile.
#include "support/box_access.hpp"
#include "cudacore/cccl.hpp"

#include <gtest/gtest.h>

namespace {

using namespace cudacore;
using cudacore::cccl::resource_adaptor;
namespace mr = ::cuda::mr;

using DeviceAdaptor = resource_adaptor<DeviceMemoryResource>;
using PinnedAdaptor = resource_adaptor<LegacyPinnedMemoryResource>;
using ManagedAdaptor = resource_adaptor<ManagedMemoryResource>;

// Synchronous and stream-ordered, for each resource.
static_assert(mr::resource<DeviceAdaptor>);
static_assert(mr::async_resource<DeviceAdaptor>);
static_assert(mr::resource<PinnedAdaptor>);
static_assert(mr::async_resource<PinnedAdaptor>);
static_assert(mr::resource<ManagedAdaptor>);
static_assert(mr::async_resource<ManagedAdaptor>);

// Properties: device memory is device-accessible only; pinned and managed are both.
static_assert(mr::async_resource_with<DeviceAdaptor, mr::device_accessible>);
static_assert(!mr::resource_with<DeviceAdaptor, mr::host_accessible>);
static_assert(mr::async_resource_with<PinnedAdaptor, mr::device_accessible, mr::host_accessible>);
static_assert(mr::async_resource_with<ManagedAdaptor, mr::device_accessible, mr::host_accessible>);

// CCCL's type-erased references accept them (what containers and algorithms hold).
static_assert(std::is_constructible_v<mr::async_resource_ref<mr::device_accessible>, DeviceAdaptor&>);
static_assert(std::is_constructible_v<mr::resource_ref<mr::host_accessible>, PinnedAdaptor&>);
static_assert(!std::is_constructible_v<mr::resource_ref<mr::host_accessible>, DeviceAdaptor&>);

// Conversions.
static_assert(std::is_same_v<decltype(cccl::to_stream_ref(std::declval<const Stream&>())),
                             ::cuda::stream_ref>);
static_assert(std::is_same_v<decltype(cccl::from_stream_ref(std::declval<::cuda::stream_ref>())),
                             Stream>);
static_assert(std::is_same_v<decltype(cccl::as_span<float>(std::declval<const Buffer&>())),
                             ::cuda::std::span<float>>);

TEST(CcclInterop, StreamRefCarriesTheHandle) {
    // An empty Stream object has a null handle: no driver needed to check the conversion.
    const Stream empty = detail::BoxAccess::empty<Stream>();
    EXPECT_EQ(cccl::to_stream_ref(empty).get(), empty.handle());
}

TEST(CcclInterop, AsSpanRefusesClosedBuffers) {
    EXPECT_THROW(cccl::as_span<int>(Buffer()), InvalidArgumentError);
}

}  // namespace
