// Without a driver the multi-device and IPC entry points throw NoDriverError, and misuse is an
// InvalidArgumentError found before the driver is needed. Runs in a child process whose driver
// path points at a missing file, so it holds on GPU machines too.
#include "test_support.hpp"

namespace {

TEST(IpcNoDriver, EntryPointsThrowNoDriverErrorAndArgumentsAreCheckedFirst) {
    auto result = cudacore::test::run_process(
        {cudacore::test::helper_path("ipc_no_driver_probe").string()},
        {{"CUDACORE_LIBCUDA_PATH", "/nonexistent/libcuda.so.1"}});
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_EQ(result.err, "");
    for (const char* entry : {"Device::count", "Device::all", "copy_between_devices",
                              "import_event", "import_memory_pool"}) {
        EXPECT_NE(result.out.find(std::string(entry) + ": NoDriverError"), std::string::npos)
            << entry << "\n" << result.out;
    }
    const std::pair<const char*, const char*> argument_errors[] = {
        {"copy_between_devices(sizes)", "sizes differ"},
        {"copy_between_devices(closed)", "is closed"},
        {"export_buffer(host memory)", "not allocated from an IPC-enabled DeviceMemoryResource or PinnedMemoryPoolResource"},
        {"import_buffer(no pool)", "no memory pool"},
        {"import_memory_pool(no fd)", "no file descriptor"},
        {"import_memory_pool(pinned descriptor)", "import it with import_pinned_memory_pool"},
        {"import_pinned_memory_pool(device descriptor)", "import it with import_memory_pool"},
        {"import_buffer(no pinned pool)", "no memory pool"},
    };
    for (const auto& [entry, text] : argument_errors) {
        const std::string line = std::string(entry) + ": InvalidArgumentError: ";
        const auto at = result.out.find(line);
        ASSERT_NE(at, std::string::npos) << entry << "\n" << result.out;
        const std::string message = result.out.substr(at, result.out.find('\n', at) - at);
        EXPECT_NE(message.find(text), std::string::npos) << message;
    }
    EXPECT_EQ(result.out.find("UNEXPECTED"), std::string::npos) << result.out;
}

}  // namespace
