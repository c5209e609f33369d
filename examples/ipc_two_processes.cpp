// Two processes sharing GPU memory: the parent allocates from an IPC-enabled pool and starts itself
// again as a child, which imports the pool, the buffer and an IPC event, writes a pattern with a
// kernel and records the event; the parent waits on it and checks. Mirrors cuda.core's memory IPC.
#include <cudacore/cudacore.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <utility>
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

// Waits for the other process's next message and checks that it is `expected`.
void expect_message(const IpcChannel& channel, const std::string& expected) {
    const std::string text = channel.receive(60s).text();
    if (text != expected)
        throw IpcError("expected '" + expected + "' from the child, got '" + text + "'");
}

// The child: imports what the parent shares, writes the pattern, records the event, then frees
// its mapping (before the parent frees the memory, as the driver requires) and says so.
int run_child(int socket) {
    IpcChannel channel = IpcChannel::adopt(FileDescriptor(socket), "the parent process");
    std::shared_ptr<DeviceMemoryResource> pool = receive_memory_pool(channel, 60s);
    const Device device = pool->device();
    Stream stream = device.create_stream();
    Buffer shared = receive_buffer(channel, pool, stream, 60s);
    Event written = receive_event(channel, 60s);
    Kernel kernel = Program(kSource, SourceType::cxx, {.arch = device.arch()})
                        .compile(CodeType::cubin)
                        .get_kernel("write_pattern");
    launch(stream, LaunchConfig{.grid = 256, .block = 256}, kernel, shared,
           shared.size() / sizeof(unsigned));
    stream.record(written);
    channel.send("recorded");
    std::printf("child %d: wrote %zu bytes of the parent's buffer\n", int(::getpid()),
                shared.size());
    std::fflush(stdout);
    shared.close(stream);  // this process's mapping only; the memory stays the parent's
    stream.sync();
    channel.send("closed");
    return 0;
}

// Starts this program again as "PROGRAM --child FD", handing it `socket` as descriptor FD
// (IpcChannel::pair makes sockets that close on exec: this one is let through). This process's
// copy closes on return, so that it sees the child's end close if the child dies.
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
    if (!device.properties().ipc_event_supported) {
        std::printf("skipped: device 0 does not support IPC events\n");
        return 0;
    }
    std::shared_ptr<DeviceMemoryResource> pool;
    try {
        pool = std::make_shared<DeviceMemoryResource>(
            device, DeviceMemoryResourceOptions{.ipc_enabled = true});
    } catch (const DriverError& e) {
        if (e.status() != CUDA_ERROR_NOT_SUPPORTED) throw;
        std::printf("skipped: no memory pools shareable between processes here (%s)\n", e.what());
        return 0;
    }
    Stream stream = device.create_stream();
    const std::size_t count = 1 << 20;
    Buffer shared = pool->allocate(count * sizeof(unsigned), stream);
    shared.fill_byte(0, stream);
    Event written = device.create_event({.ipc_enabled = true});
    stream.sync();  // the allocation is complete before the other process maps it

    // A connected pair of sockets: this process keeps one end, the child inherits the other.
    auto [channel, child_end] = IpcChannel::pair();
    const pid_t child = start_child(argv[0], std::move(child_end));
    send_memory_pool(channel, *pool);
    send_buffer(channel, shared);
    send_event(channel, written);
    expect_message(channel, "recorded");
    stream.wait(written);  // the child's kernel has finished before this stream reads

    std::vector<unsigned> data(count);
    shared.copy_to(data, stream);
    stream.sync();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < count; ++i) wrong += data[i] != unsigned(i) * 2654435761u + 12345u;
    expect_message(channel, "closed");  // the child's mapping is gone: the memory may be freed
    int status = 0;
    ::waitpid(child, &status, 0);
    const bool child_ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    std::printf("the child process wrote %zu words through the shared pool, %zu wrong; it %s\n",
                count, wrong, child_ok ? "exited cleanly" : "failed");
    return wrong == 0 && child_ok ? 0 : 1;
} catch (const cudacore::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
}
