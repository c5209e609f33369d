// Slices of a Buffer on a GPU: copies and fills of part of a buffer, a slice as a kernel
// argument, in copy_batch, exported through DLPack, and the owner's close reaching its slices.
#include "test_support.hpp"

#include "cudacore/batched_copy.hpp"
#include "cudacore/buffer.hpp"
#include "cudacore/buffer_slice.hpp"
#include "cudacore/device.hpp"
#include "cudacore/dlpack.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/program.hpp"
#include "cudacore/synchronous_memory_resource.hpp"

#include <cstdint>
#include <numeric>
#include <vector>

namespace {

using namespace cudacore;

constexpr const char* kernels = R"(
extern "C" __global__ void add_one(unsigned* data, unsigned long long count) {
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    if (i < count) data[i] += 1u;
}
)";

std::vector<std::uint32_t> iota_words(std::size_t count) {
    std::vector<std::uint32_t> words(count);
    std::iota(words.begin(), words.end(), 0u);
    return words;
}

TEST(BufferSliceGpu, CopiesAndFillsReachOnlyTheirPartOfTheBuffer) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream stream = device.create_stream();
    Buffer source = device.allocate(4096 * 4, stream);
    Buffer target = device.allocate(4096 * 4, stream);
    source.copy_from(iota_words(4096), stream);
    target.fill_uint32(0xFFFFFFFFu, stream);
    // Words [1024, 2048) of the source into words [0, 1024) of the target, then a fill of the
    // target's words [3072, 4096).
    slice(target, 0, 4096).copy_from(slice(source, 4096, 4096), stream);
    slice(target, 3072 * 4).fill_uint32(7u, stream);
    std::vector<std::uint32_t> back(4096);
    target.copy_to(back, stream);
    // A slice to and from host memory.
    std::vector<std::uint32_t> part(16);
    slice(source, 100 * 4, 64).copy_to(part, stream);
    stream.sync();
    for (std::size_t i = 0; i < 1024; ++i) ASSERT_EQ(back[i], 1024 + i) << i;
    for (std::size_t i = 1024; i < 3072; ++i) ASSERT_EQ(back[i], 0xFFFFFFFFu) << i;
    for (std::size_t i = 3072; i < 4096; ++i) ASSERT_EQ(back[i], 7u) << i;
    for (std::size_t i = 0; i < 16; ++i) EXPECT_EQ(part[i], 100 + i);
}

TEST(BufferSliceGpu, ASliceIsAKernelArgumentAndACopyBatchOperand) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    ProgramOptions options;
    options.name = "buffer_slice_test";
    options.arch = device.arch();
    ObjectCode code = Program(kernels, SourceType::cxx, options).compile(CodeType::cubin);
    Kernel add_one = code.get_kernel("add_one");
    Stream stream = device.create_stream();
    Buffer buffer = device.allocate(1024 * 4, stream);
    buffer.copy_from(iota_words(1024), stream);
    // Only words [256, 512) are incremented.
    Buffer middle = slice(buffer, 256 * 4, 256 * 4);
    launch(stream, LaunchConfig{.grid = 1, .block = 256}, add_one, middle, 256ull);
    // copy_batch of two slices: words [0, 16) into words [1000, 1016).
    Buffer head = slice(buffer, 0, 64);
    Buffer tail = slice(buffer, 1000 * 4, 64);
    const CopyPair pairs[] = {{tail, head}};
    copy_batch(pairs, stream);
    std::vector<std::uint32_t> back(1024);
    buffer.copy_to(back, stream);
    stream.sync();
    for (std::size_t i = 0; i < 1024; ++i) {
        const std::uint32_t expected = i >= 1000 && i < 1016 ? static_cast<std::uint32_t>(i - 1000)
                                       : i >= 256 && i < 512 ? static_cast<std::uint32_t>(i + 1)
                                                             : static_cast<std::uint32_t>(i);
        ASSERT_EQ(back[i], expected) << i;
    }
}

TEST(BufferSliceGpu, DLPackExportOfASliceHoldsTheOwner) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream stream = device.create_stream();
    auto resource = std::make_shared<SynchronousMemoryResource>(device);
    Buffer owner = resource->allocate(4096, stream);
    DLManagedTensor* tensor =
        to_dlpack(slice(owner, 1024, 1024), {.shape = {256}, .dtype = {kDLUInt, 32, 1}});
    const CUdeviceptr start = owner.handle();
    owner.reset();  // the tensor holds the slice, which holds the allocation
    EXPECT_EQ(reinterpret_cast<CUdeviceptr>(tensor->dl_tensor.data) + tensor->dl_tensor.byte_offset,
              start + 1024);
    Buffer back = from_dlpack(tensor);
    back.fill_uint32(5u, stream);  // the memory is still allocated: the driver accepts the fill
    std::vector<std::uint32_t> words(256);
    back.copy_to(words, stream);
    stream.sync();
    EXPECT_EQ(words.front(), 5u);
    EXPECT_EQ(words.back(), 5u);
}

TEST(BufferSliceGpu, ClosingTheOwnerClosesItsSlicesAndClosingASliceKeepsTheOwner) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream stream = device.create_stream();
    Buffer owner = device.allocate(4096, stream);
    Buffer part = slice(owner, 0, 1024);
    part.close(stream);
    EXPECT_FALSE(owner.is_closed());
    owner.fill_byte(1, stream);  // still the owner's memory
    Buffer other = slice(owner, 1024, 1024);
    owner.close(stream);
    EXPECT_TRUE(other.is_closed());
    try {
        other.fill_byte(0, stream);
        FAIL() << "a slice of a closed buffer was filled";
    } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("closed"), std::string::npos) << e.what();
    }
    stream.sync();
}

}  // namespace
