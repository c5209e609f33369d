// The other process of the IPC channel tests. Usage: ipc_channel_peer MODE SOCKET_PATH
//   write-fd: connects, receives a message with a file descriptor, writes "<text> from <pid>"
//             into that descriptor (the text is the message), replies "done" and exits 0.
//   exit:     connects and exits at once without sending anything.
//   kill:     connects and kills itself with SIGKILL.
//   echo-fd:  connects, receives a message with a descriptor and sends both back.
#include "cudacore/ipc_channel.hpp"

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <string>

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: ipc_channel_peer MODE SOCKET_PATH\n");
        return 2;
    }
    const std::string mode = argv[1];
    try {
        cudacore::IpcChannel channel = cudacore::IpcChannel::connect(argv[2]);
        if (mode == "exit") return 0;
        if (mode == "kill") std::raise(SIGKILL);
        cudacore::IpcMessage message = channel.receive(std::chrono::seconds(20));
        if (!message.fd.valid()) {
            std::fprintf(stderr, "no file descriptor arrived\n");
            return 3;
        }
        if (mode == "write-fd") {
            const std::string line = message.text() + " from " + std::to_string(::getpid());
            if (::write(message.fd.get(), line.data(), line.size()) !=
                static_cast<ssize_t>(line.size())) {
                std::perror("write");
                return 4;
            }
            message.fd.reset();
            channel.send(std::string("done"));
            return 0;
        }
        if (mode == "echo-fd") {
            channel.send(message.bytes, message.fd.get());
            return 0;
        }
        std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "ipc_channel_peer: %s\n", e.what());
        return 1;
    }
}
