// Two processes sharing one physical allocation through virtual memory: the parent creates it
// (exportable as a POSIX file descriptor), maps it and sends it over a socket; a child process
// (this program started again) imports it, maps it into an address range of its own and writes a
// pattern through it with a kernel; the parent reads the pattern through its own mapping and
// checks it. Exits 1 when a word is wrong or the child failed.
#include <cudacore/cudacore.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

static const char* kSource = R"(
extern "C" __global__ void write_pattern(unsigned* data, size_t count) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
         i += (size_t)gridDim.x * blockDim.x)
        data[i] = (unsigned)i * 2654435761u + 12345u;
}
)";

namespace {

using namespace cudacore;
using namespace std::chrono_literals;

// The child: imports the allocation, maps it, writes the pattern, lets go of its mapping and its
// handle (the memory stays the parent's), and says so.
int run_child(int socket) {
    IpcChannel channel = IpcChannel::adopt(FileDescriptor(socket), "the parent process");
    PhysicalAllocation memory = receive_physical_allocation(channel, 60s);
    const Device device(memory.device_ordinal());
    {
        VirtualAddressRange range = VirtualAddressRange::reserve(device, memory.size());
        VirtualMemoryMapping mapping = VirtualMemoryMapping::map(range, 0, memory);
        Kernel kernel = Program(kSource, SourceType::cxx, {.arch = device.arch()})
                            .compile(CodeType::cubin)
                            .get_kernel("write_pattern");
        Stream stream = device.create_stream();
        launch(stream, LaunchConfig{.grid = 256, .block = 256}, kernel, mapping.address(),
               mapping.size() / sizeof(unsigned));
        stream.sync();  // done before the mapping goes
        std::printf("child %d: wrote %zu bytes through its own mapping at 0x%llx\n", int(::getpid()),
                    mapping.size(), static_cast<unsigned long long>(mapping.address()));
        std::fflush(stdout);
    }
    channel.send("written");
    return 0;
}

// Starts this program again as "PROGRAM --child FD", handing it `socket` (see
// example_ipc_two_processes).
pid_t start_child(const char* program_name, IpcChannel socket) {
    if (::fcntl(socket.native_handle(), F_SETFD, 0) != 0)
        throw IpcError("fcntl(F_SETFD) on the child's socket failed");
    std::string child_flag = "--child", fd = std::to_string(socket.native_handle());
    char* argv[] = {const_cast<char*>(program_name), child_flag.data(), fd.data(), nullptr};
    pid_t pid = 0;
    if (const int error = ::posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv, environ))
        throw IpcError("posix_spawn of /proc/self/exe failed: " + std::to_string(error));
    return pid;
}

}  // namespace

int main(int argc, char** argv) try {
    if (argc == 3 && std::string(argv[1]) == "--child") return run_child(std::stoi(argv[2]));
    if (!system::driver_available() || system::device_count() == 0) {
        std::printf("skipped: no CUDA driver or GPU on this machine\n");
        return 0;
    }
    const Device device(0);
    if (!device.attribute(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED) ||
        !device.attribute(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED)) {
        std::printf("skipped: device 0 cannot share virtual memory through file descriptors\n");
        return 0;
    }
    const std::size_t granularity = allocation_granularity(device).minimum;
    PhysicalAllocation memory = PhysicalAllocation::create(
        device, 8 * granularity, {.handle_types = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR});
    VirtualAddressRange range = VirtualAddressRange::reserve(device, memory.size());
    VirtualMemoryMapping mapping = VirtualMemoryMapping::map(range, 0, memory);
    Buffer shared = mapping.as_buffer();
    Stream stream = device.create_stream();
    shared.fill_byte(0, stream);
    stream.sync();

    auto [channel, child_end] = IpcChannel::pair();
    const pid_t child = start_child(argv[0], std::move(child_end));
    send_physical_allocation(channel, memory);
    const std::string reply = channel.receive(60s).text();
    if (reply != "written") throw IpcError("expected 'written' from the child, got '" + reply + "'");

    const std::size_t count = shared.size() / sizeof(unsigned);
    std::vector<unsigned> data(count);
    shared.copy_to(data, stream);
    stream.sync();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < count; ++i) wrong += data[i] != unsigned(i) * 2654435761u + 12345u;
    int status = 0;
    ::waitpid(child, &status, 0);
    const bool child_ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    std::printf("the child process wrote %zu words into the shared physical allocation, %zu wrong; it %s\n",
                count, wrong, child_ok ? "exited cleanly" : "failed");
    return wrong == 0 && child_ok ? 0 : 1;
} catch (const cudacore::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
}
