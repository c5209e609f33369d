// What launches and loads check without a GPU: grids made from a size (grid_for), the message of
// an argument whose size does not match its parameter, and load options refused before the
// driver is opened.
#include "test_support.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/grid_sizing.hpp"
#include "cudacore/load_options.hpp"
#include "cudacore/loaded_library.hpp"
#include "cudacore/object_code.hpp"
#include "runtime/launch_checks.hpp"

#include <functional>
#include <string>

namespace {

using namespace cudacore;

std::string invalid_message(const std::function<void()>& call) {
    try {
        call();
    } catch (const InvalidArgumentError& e) {
        return e.what();
    }
    return "<no InvalidArgumentError>";
}

TEST(GridFor, RoundsUpToWholeBlocks) {
    EXPECT_EQ(grid_for(1000, 256), Dim3(4));
    EXPECT_EQ(grid_for(1024, 256), Dim3(4));
    EXPECT_EQ(grid_for(1025, 256), Dim3(5));
    EXPECT_EQ(grid_for(1, 1024), Dim3(1));
    EXPECT_EQ(grid_for(0, 128), Dim3(0)) << "nothing to cover: a grid of 0 (launch refuses it)";
    EXPECT_EQ(grid_for(std::uint64_t{1} << 40, 1024), Dim3(1u << 30));
    EXPECT_EQ(grid_for(Dim3(1920, 1080), Dim3(16, 16)), Dim3(120, 68));
    EXPECT_EQ(grid_for(Dim3(100, 100, 100), Dim3(8, 8, 8)), Dim3(13, 13, 13));
}

TEST(GridFor, RefusesZeroBlocksAndGridsOverTheDriversLimits) {
    EXPECT_NE(invalid_message([] { grid_for(100, 0); }).find("a block of 0 threads"), std::string::npos);
    const std::string x = invalid_message([] { grid_for(std::uint64_t{1} << 40, 32); });
    EXPECT_NE(x.find("need 34359738368 blocks, over the driver's 2147483647 in x"), std::string::npos) << x;
    const std::string y = invalid_message([] { grid_for(Dim3(1, 100000), Dim3(1, 1)); });
    EXPECT_NE(y.find("100000 blocks in y, over the driver's 65535"), std::string::npos) << y;
    EXPECT_NE(invalid_message([] { grid_for(Dim3(8, 8), Dim3(8, 0)); }).find("is 0 in y"), std::string::npos);
}

// An untyped launch that passes an int where the kernel takes a size_t is refused before the
// driver (launch.cpp's check_arguments); its message names the parameter's position, its size
// and the argument's size.
TEST(LaunchArgumentMessage, NamesThePositionAndBothSizes) {
    const KernelParameter n{.offset = 24, .size = 8};
    const std::string message = detail::argument_size_problem(3, 4, 4, n);
    EXPECT_NE(message.find("argument 3 is 4 bytes, but parameter 3 (the 4th of 4, at offset 24) is 8 bytes"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("std::size_t{10}"), std::string::npos) << message;
    EXPECT_NE(detail::argument_size_problem(0, 1, 8, {.offset = 0, .size = 4}).find("(the 1st of 1, at offset 0)"),
              std::string::npos);
    EXPECT_NE(detail::argument_size_problem(1, 12, 8, {.offset = 8, .size = 4}).find("the 2nd of 12"),
              std::string::npos);
    EXPECT_NE(detail::argument_size_problem(2, 12, 8, {.offset = 8, .size = 4}).find("the 3rd of 12"),
              std::string::npos);
    EXPECT_NE(detail::argument_size_problem(10, 12, 8, {.offset = 8, .size = 4}).find("the 11th of 12"),
              std::string::npos);
}

// Options out of range are refused before the driver is opened, and nothing is loaded.
TEST(LoadWithOptions, RefusesBadOptionsBeforeTheDriver) {
    const ObjectCode code = ObjectCode::from_ptx(".version 8.0\n.target sm_90\n.address_size 64\n", "tiny");
    EXPECT_NE(invalid_message([&] { load_with_options(code, {.optimization_level = 7}); })
                  .find("optimization_level 7 is not 0 to 4"),
              std::string::npos);
    EXPECT_NE(invalid_message([&] { load_with_options(code, {.max_registers = 0u}); }).find("max_registers is 0"),
              std::string::npos);
    EXPECT_NE(invalid_message([&] { load_with_options(code, {.threads_per_block = 0u}); })
                  .find("threads_per_block is 0"),
              std::string::npos);
    EXPECT_NE(invalid_message([&] { load_with_options(code, {.cache_mode = static_cast<CUjit_cacheMode>(9)}); })
                  .find("cache_mode 9"),
              std::string::npos);
    const std::string logs = invalid_message([&] { load_with_options(code, {.log_bytes = 0}); });
    EXPECT_NE(logs.find("log_bytes 0 is not 1 to"), std::string::npos) << logs;
    EXPECT_NE(logs.find("ptx 'tiny'"), std::string::npos) << logs;
    EXPECT_FALSE(code.is_loaded());
}

TEST(LoadWithOptions, AClosedObjectCodeIsRefused) {
    ObjectCode code = ObjectCode::from_ptx(".version 8.0\n.target sm_90\n.address_size 64\n", "closed");
    code.close();
    EXPECT_NE(invalid_message([&] { load_with_options(code, {}); }).find("load_with_options"), std::string::npos);
    EXPECT_NE(invalid_message([&] { library_kernel_count(code); }).find("library_kernel_count"), std::string::npos);
    EXPECT_NE(invalid_message([&] { library_kernels(code); }).find("library_kernels"), std::string::npos);
}

}  // namespace
